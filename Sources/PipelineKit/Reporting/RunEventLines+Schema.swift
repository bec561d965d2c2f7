extension RunEventLines {
    /// The JSON Schema (draft 2020-12) of one line, for `pipeline schema --events`: what a script
    /// reading `--json` may rely on. Each kind allows only its own fields, so a field added to a
    /// line's type and not here fails the test that checks a real run's lines against it.
    package static let jsonSchema = """
        {
          "$schema": "https://json-schema.org/draft/2020-12/schema",
          "$id": "https://github.com/pipeline/pipeline/schema/events-v1.json",
          "title": "pipeline run --json, one line",
          "description": "One JSON object per line: runStarted, then per input itemStarted, stageFinished, itemFailed and warning lines and itemCompleted, then runFinished.",
          "oneOf": [
            {"$ref": "#/$defs/runStarted"}, {"$ref": "#/$defs/itemStarted"}, {"$ref": "#/$defs/stageFinished"},
            {"$ref": "#/$defs/itemFailed"}, {"$ref": "#/$defs/warning"}, {"$ref": "#/$defs/itemCompleted"},
            {"$ref": "#/$defs/runFinished"}
          ],
          "$defs": {
            "count": {"type": "integer", "minimum": 0},
            "seconds": {"type": "number", "minimum": 0},
            "strings": {"type": "array", "items": {"type": "string"}},
            "runStarted": {
              "type": "object", "additionalProperties": false,
              "required": ["event", "inputs", "outputsPerInput", "warnings"],
              "properties": {
                "event": {"const": "runStarted"},
                "inputs": {"$ref": "#/$defs/count", "description": "Inputs planned."},
                "outputsPerInput": {"$ref": "#/$defs/count", "description": "Files per input at most (every width × format)."},
                "warnings": {"$ref": "#/$defs/strings"},
                "shard": {
                  "type": "object", "additionalProperties": false, "required": ["index", "count"],
                  "description": "The shard the run makes (from 0), only when it is one.",
                  "properties": {"index": {"$ref": "#/$defs/count"}, "count": {"type": "integer", "minimum": 1}}
                }
              }
            },
            "itemStarted": {
              "type": "object", "additionalProperties": false, "required": ["event", "input"],
              "properties": {"event": {"const": "itemStarted"}, "input": {"type": "string"}}
            },
            "stageFinished": {
              "type": "object", "additionalProperties": false,
              "required": ["event", "stage", "input", "start", "seconds", "waited", "lane", "succeeded"],
              "properties": {
                "event": {"const": "stageFinished"},
                "stage": {"type": "string", "enum": [\(Stage.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))]},
                "input": {"type": "string"},
                "output": {"type": "string", "description": "The output, for stages after fan-out."},
                "start": {"$ref": "#/$defs/seconds", "description": "Seconds since the run started."},
                "seconds": {"$ref": "#/$defs/seconds"},
                "waited": {"$ref": "#/$defs/seconds", "description": "Seconds waiting for a lane."},
                "lane": {"$ref": "#/$defs/count"},
                "succeeded": {"type": "boolean"}
              }
            },
            "itemFailed": {
              "type": "object", "additionalProperties": false,
              "required": ["event", "input", "stage", "kind", "reason"],
              "properties": {
                "event": {"const": "itemFailed"},
                "input": {"type": "string"},
                "output": {"type": "string", "description": "Absent when the whole input failed."},
                "file": {"type": "string", "description": "Which of the output's files, when it makes several: 320 px, avif."},
                "stage": {"type": "string", "enum": [\(Stage.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", "))]},
                "kind": {"type": "string", "description": "For programs: processing, httpStatus, …"},
                "reason": {"type": "string"},
                "step": {
                  "type": "object", "additionalProperties": false, "required": ["index", "name"],
                  "properties": {"index": {"$ref": "#/$defs/count"}, "name": {"type": "string"}}
                }
              }
            },
            "warning": {
              "type": "object", "additionalProperties": false, "required": ["event", "input", "message"],
              "properties": {"event": {"const": "warning"}, "input": {"type": "string"}, "message": {"type": "string"}}
            },
            "itemCompleted": {
              "type": "object", "additionalProperties": false, "required": ["event", "input", "status", "outputs"],
              "properties": {
                "event": {"const": "itemCompleted"},
                "input": {"type": "string"},
                "status": {"enum": ["succeeded", "failed"]},
                "outputs": {
                  "type": "array",
                  "items": {
                    "type": "object", "additionalProperties": false,
                    "required": ["name", "path", "width", "height", "bytes", "upToDate"],
                    "properties": {
                      "name": {"type": "string"},
                      "path": {"type": "string"},
                      "width": {"type": "integer", "minimum": 1},
                      "height": {"type": "integer", "minimum": 1},
                      "bytes": {"$ref": "#/$defs/count"},
                      "upToDate": {"type": "boolean"},
                      "quality": {"type": "integer", "description": "Chosen by a quality target."},
                      "ssimulacra2": {"type": "number", "description": "The file's score, when searched."}
                    }
                  }
                }
              }
            },
            "runFinished": {
              "type": "object", "additionalProperties": false,
              "required": [
                "event", "inputs", "succeeded", "failed", "notRun", "outputsWritten", "outputsUpToDate", "seconds",
                "imagesPerSecond", "cancelled", "inputsServedStale"
              ],
              "properties": {
                "event": {"const": "runFinished"},
                "inputs": {"$ref": "#/$defs/count"},
                "succeeded": {"$ref": "#/$defs/count"},
                "failed": {"$ref": "#/$defs/count"},
                "notRun": {"$ref": "#/$defs/count"},
                "outputsWritten": {"$ref": "#/$defs/count"},
                "outputsUpToDate": {"$ref": "#/$defs/count"},
                "seconds": {"$ref": "#/$defs/seconds"},
                "imagesPerSecond": {"type": "number", "minimum": 0},
                "cancelled": {"type": "boolean"},
                "inputsServedStale": {"$ref": "#/$defs/count"},
                "warnings": {"$ref": "#/$defs/strings", "description": "What could not be written beside the outputs."},
                "manifestProblem": {"type": "string", "description": "Why the manifest could not be written: the run exits 1."},
                "outputFolder": {"type": "string", "description": "The folder that holds every output."},
                "firstOutput": {"type": "string"},
                "memory": {
                  "type": "object", "additionalProperties": false,
                  "required": ["budgetBytes", "limitBytes", "source", "peakAdmittedBytes"],
                  "properties": {
                    "budgetBytes": {"type": "integer"},
                    "limitBytes": {"type": "integer"},
                    "source": {"type": "string"},
                    "peakAdmittedBytes": {"type": "integer"}
                  }
                }
              }
            }
          }
        }
        """
}
