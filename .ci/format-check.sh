#!/usr/bin/env bash
# Checks the Swift files against .swift-format with the toolchain's `swift format`: any finding,
# layout or rule, fails. `swift format format --in-place --recursive Sources Plugins Tests
# Package.swift` fixes the layout; a rule's finding it cannot fix names the file and line.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --parallel --recursive Sources Plugins Tests Package.swift
