#if Faces
import Foundation
import TestSupport
import Testing

/// OpenCV is loaded when a crop about faces needs it, not at every start: the dynamic loader's
/// own log (`LD_DEBUG=files`) names each library it loads.
@Suite struct FaceLibraryCommandTests {
    static let face = CommandRunner.repositoryRoot.appendingPathComponent("Pipelines/samples/people/astronaut.jpg")

    func run(position: String) throws -> (status: Int32, loadsOpenCV: Bool) {
        let directory = try TemporaryDirectory()
        try directory.write(try Data(contentsOf: Self.face), to: "in/face.jpg")
        let resize = #"{"resize": {"width": 90, "height": 30, "fit": "cover", "position": "\#(position)"}}"#
        let output = #"{"name": "banner", "steps": [\#(resize)], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}"#
        let json = #"{"version": 1, "name": "faces", "inputs": ["in/*.jpg"], "outputs": [\#(output)]}"#
        try directory.write(Data(json.utf8), to: "faces.json")
        let result = try CommandRunner.run(["run", "--quiet", directory.path + "/faces.json"], environment: ["LD_DEBUG": "files"])
        return (result.status, result.standardError.contains("libopencv_objdetect"))
    }

    @Test func aRunWithoutFacesLoadsNoOpenCV() throws {
        let centred = try run(position: "centre")
        #expect(centred.status == 0)
        #expect(!centred.loadsOpenCV, "OpenCV was loaded for a run that crops about no face")
        let faces = try run(position: "faces")
        #expect(faces.status == 0)
        #expect(faces.loadsOpenCV, "the face crop ran without loading OpenCV: LD_DEBUG shows no library loads")
    }
}
#endif
