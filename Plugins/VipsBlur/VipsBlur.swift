// VipsBlur plugin: see Package.swift
