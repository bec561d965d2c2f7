// VipsResize plugin: see Package.swift
