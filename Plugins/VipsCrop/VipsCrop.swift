// VipsCrop plugin: see Package.swift
