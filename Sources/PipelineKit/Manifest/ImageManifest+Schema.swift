extension ImageManifest {
    /// `names` as a JSON array of strings.
    private static func jsonArray(_ names: [String]) -> String {
        "[" + names.map { JSONNode.quoted($0) }.joined(separator: ", ") + "]"
    }

    /// The formats a file or a format entry may have: every format an output writes.
    private static let formats = jsonArray(EncoderSettings.Format.allCases.map(\.rawValue))
    /// Their MIME types.
    private static let mimeTypes = jsonArray(EncoderSettings.Format.allCases.map(\.mimeType))
    /// The formats and MIME types of a tile pyramid's tiles.
    private static let tileFormats = jsonArray(TileSettings.TileFormat.allCases.map(\.rawValue))
    private static let tileMimeTypes = jsonArray(TileSettings.TileFormat.allCases.map(\.format.mimeType))
    /// The layouts of a tile pyramid.
    private static let tileLayouts = jsonArray(TileSettings.Layout.allCases.map(\.rawValue))

    /// The manifest's JSON Schema (draft 2020-12), for `pipeline schema --manifest`: what a site
    /// generator may rely on. Its lists of formats, MIME types and layouts are the encoders' own.
    public static let jsonSchema = """
        {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "$id": "https://github.com/pipeline/pipeline/schema/manifest-v1.json",
          "title": "pipeline image manifest, version 1",
          "description": "What a run made: per input, its size and per output and format the files sorted by width, a srcset, the fallback for <img> and the placeholders.",
          "type": "object",
          "required": ["version", "pipeline", "inputs"],
          "additionalProperties": false,
          "properties": {
            "version": {"const": 1},
            "pipeline": {"type": "string", "description": "The pipeline's name."},
            "shard": {
              "type": "object",
              "description": "In a shard's manifest alone (manifest.shard-2-of-4.json): the run that wrote it, which merge-manifests checks.",
              "required": ["index", "count", "inputs", "settings", "finished"],
              "additionalProperties": false,
              "properties": {
                "index": {"type": "integer", "minimum": 0},
                "count": {"type": "integer", "minimum": 1},
                "inputs": {"type": "string", "description": "A digest of the names of the shard's inputs."},
                "settings": {"type": "string", "description": "A digest of the settings its entries were made with."},
                "finished": {"type": "boolean", "description": "False when the run was stopped before it had been through its inputs."},
                "versions": {"type": "string", "description": "A digest of the versions of the shard's inputs as its run began."}
              }
            },
            "inputs": {
              "type": "array",
              "description": "Sorted by source.",
              "items": {
                "type": "object",
                "required": ["source", "width", "height", "outputs"],
                "additionalProperties": false,
                "properties": {
                  "source": {"type": "string", "description": "The input: a path relative to the pipeline file's folder, or a URL."},
                  "width": {"type": "integer", "minimum": 1, "description": "Intrinsic width, upright."},
                  "height": {"type": "integer", "minimum": 1, "description": "Intrinsic height, upright."},
                  "outputs": {"type": "object", "additionalProperties": {"$ref": "#/$defs/output"}}
                }
              }
            }
          },
          "$defs": {
            "output": {
              "type": "object",
              "required": ["formats"],
              "additionalProperties": false,
              "properties": {
                "formats": {"type": "array", "items": {"$ref": "#/$defs/format"}, "description": "In the order the output lists them."},
                "fallback": {"$ref": "#/$defs/file", "description": "The file an <img> names: the widest of the last format."},
                "placeholdersFrom": {"type": "string", "description": "The file the placeholders were computed from (its fingerprint and size in bytes), then the placeholders and the settings they were computed with."},
                "tiles": {"$ref": "#/$defs/tiles", "description": "A tiles output's pyramid; its formats are then empty."},
                "failed": {"type": "array", "items": {"type": "string"}, "description": "The output's files the run that wrote this entry failed to make (`320 px, avif`); the entry lists only those it made."},
                "art": {
                  "type": "array",
                  "description": "Art direction crops, in the order the output lists them: <source media> elements before the output's own.",
                  "items": {
                    "type": "object",
                    "required": ["media", "aspectRatio", "formats"],
                    "additionalProperties": false,
                    "properties": {
                      "media": {"type": "string"},
                      "aspectRatio": {"type": "string", "pattern": "^[0-9.]+:[0-9.]+$"},
                      "sizes": {"type": "string"},
                      "formats": {"type": "array", "items": {"$ref": "#/$defs/format"}}
                    }
                  }
                },
                "placeholders": {
                  "type": "object",
                  "additionalProperties": false,
                  "properties": {
                    "lqip": {"type": "string", "pattern": "^data:image/webp;base64,"},
                    "blurhash": {"type": "string"},
                    "thumbhash": {"type": "string", "description": "ThumbHash bytes, base64."},
                    "dominantColor": {"type": "string", "pattern": "^#[0-9a-f]{6}$"},
                    "transparent": {"const": true, "description": "The image lets the page through somewhere: a placeholder behind it would stay visible."}
                  }
                }
              }
            },
            "format": {
              "type": "object",
              "required": ["format", "mimeType", "files", "srcset"],
              "additionalProperties": false,
              "properties": {
                "format": {"enum": \(formats)},
                "mimeType": {"enum": \(mimeTypes)},
                "files": {"type": "array", "items": {"$ref": "#/$defs/file"}, "description": "Narrowest first."},
                "srcset": {"type": "string"}
              }
            },
            "tiles": {
              "type": "object",
              "required": ["layout", "url", "path", "width", "height", "tileSize", "overlap", "format", "mimeType", "bytes"],
              "additionalProperties": false,
              "properties": {
                "layout": {"enum": \(tileLayouts)},
                "url": {"type": "string", "description": "What a viewer is given: the .dzi file, or the pyramid's folder."},
                "path": {"type": "string", "description": "Relative to the manifest's folder."},
                "width": {"type": "integer", "minimum": 1},
                "height": {"type": "integer", "minimum": 1},
                "tileSize": {"type": "integer", "minimum": 1},
                "overlap": {"type": "integer", "minimum": 0},
                "format": {"enum": \(tileFormats)},
                "mimeType": {"enum": \(tileMimeTypes)},
                "bytes": {"type": "integer", "minimum": 0, "description": "Every file of the pyramid together."}
              }
            },
            "file": {
              "type": "object",
              "required": ["url", "path", "width", "height", "bytes", "format", "mimeType"],
              "additionalProperties": false,
              "properties": {
                "url": {"type": "string"},
                "path": {"type": "string", "description": "Relative to the manifest's folder."},
                "width": {"type": "integer", "minimum": 1},
                "height": {"type": "integer", "minimum": 1},
                "bytes": {"type": "integer", "minimum": 0},
                "format": {"enum": \(formats)},
                "mimeType": {"enum": \(mimeTypes)},
                "quality": {"type": "integer", "minimum": 1, "maximum": 100, "description": "The quality a quality target's search chose."},
                "ssimulacra2": {"type": "number", "description": "The file's SSIMULACRA 2 score, when its quality was searched."}
              }
            }
          }
        }
        """
}
