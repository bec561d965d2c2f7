import Foundation
import Testing

@testable import PipelineKit

@Suite struct MemoryBudgetTests {
    @Test func theNearestCgroupV2LimitUpTheTreeApplies() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("0::/kubepods/pod1/container\n".utf8), to: "self-cgroup")
        try directory.write(Data("max\n".utf8), to: "cg/kubepods/pod1/container/memory.max")
        try directory.write(Data("629145600\n".utf8), to: "cg/kubepods/pod1/memory.max")
        let found = MemoryBudget.cgroupLimit(root: directory.path + "/cg", selfCgroup: directory.path + "/self-cgroup")
        #expect(found?.0 == 629_145_600)
        #expect(found?.1.contains("kubepods/pod1/memory.max") == true)
    }

    @Test func cgroupV1AndNoLimitAtAll() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("1073741824\n".utf8), to: "cg/memory/memory.limit_in_bytes")
        #expect(MemoryBudget.cgroupLimit(root: directory.path + "/cg", selfCgroup: directory.path + "/none")?.0 == 1_073_741_824)
        // v1 reports "no limit" as a huge number
        try directory.write(Data("9223372036854771712\n".utf8), to: "cg/memory/memory.limit_in_bytes")
        #expect(MemoryBudget.cgroupLimit(root: directory.path + "/cg", selfCgroup: directory.path + "/none") == nil)
    }

    @Test func aCgroupV1GroupBelowTheRootIsFollowedAndTheStrictestLimitUpTheTreeApplies() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("5:cpu,cpuacct:/\n4:memory:/jobs/job7/step0\n0::/\n".utf8), to: "self-cgroup")
        try directory.write(Data("9223372036854771712\n".utf8), to: "cg/memory/memory.limit_in_bytes")
        try directory.write(Data("9223372036854771712\n".utf8), to: "cg/memory/jobs/job7/step0/memory.limit_in_bytes")
        try directory.write(Data("2147483648\n".utf8), to: "cg/memory/jobs/job7/memory.limit_in_bytes")
        try directory.write(Data("4294967296\n".utf8), to: "cg/memory/jobs/memory.limit_in_bytes")
        let found = MemoryBudget.cgroupLimit(root: directory.path + "/cg", selfCgroup: directory.path + "/self-cgroup")
        #expect(found?.0 == 2_147_483_648)
        #expect(found?.1.contains("memory/jobs/job7/memory.limit_in_bytes") == true)
    }

    @Test func anExplicitLimitWinsAndLeavesRoomForTheProcess() {
        let budget = MemoryBudget.detect(explicit: 600_000_000)
        #expect(budget?.source == "--max-memory" && budget?.limit == 600_000_000)
        #expect((budget?.bytes ?? .max) < 600_000_000 - MemoryBudget.reserve)
    }
}
