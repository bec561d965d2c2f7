import Foundation
import StandardProcessors
import TestSupport
import Testing

@testable import PipelineKit

@Suite struct AvailableCoresTests {
    @Test func theAffinityListIsCountedRangeByRange() {
        #expect(AvailableCores.affinity(inStatus: "Name:\tpipeline\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n") == 2)
        #expect(AvailableCores.affinity(inStatus: "Cpus_allowed_list:\t0-3,8,10-11\n") == 7)
        #expect(AvailableCores.affinity(inStatus: "Cpus_allowed_list:\t5\n") == 1)
        #expect(AvailableCores.affinity(inStatus: "Cpus_allowed_list:\t\n") == nil)
        #expect(AvailableCores.affinity(inStatus: "Cpus_allowed_list:\t3-1\n") == nil)
        #expect(AvailableCores.affinity(inStatus: "Name:\tpipeline\n") == nil)
    }

    @Test func aCgroupV2QuotaIsRoundedUpAndTheStrictestUpTheTreeApplies() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("0::/kubepods/pod1/container\n".utf8), to: "self-cgroup")
        try directory.write(Data("max 100000\n".utf8), to: "cg/kubepods/pod1/container/cpu.max")
        try directory.write(Data("250000 100000\n".utf8), to: "cg/kubepods/pod1/cpu.max")
        try directory.write(Data("400000 100000\n".utf8), to: "cg/kubepods/cpu.max")
        let groups = ControlGroups(root: directory.path + "/cg", selfCgroup: directory.path + "/self-cgroup")
        #expect(AvailableCores.quota(in: groups) == 3)
        // No quota anywhere: "max" is none.
        try directory.write(Data("max 100000\n".utf8), to: "cg/kubepods/pod1/cpu.max")
        try directory.write(Data("max 100000\n".utf8), to: "cg/kubepods/cpu.max")
        #expect(AvailableCores.quota(in: groups) == nil)
    }

    @Test func aCgroupV1QuotaIsReadOverItsPeriod() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("3:cpu,cpuacct:/slurm/job7\n4:memory:/slurm/job7\n".utf8), to: "self-cgroup")
        try directory.write(Data("-1\n".utf8), to: "cg/cpu/cpu.cfs_quota_us")
        try directory.write(Data("100000\n".utf8), to: "cg/cpu/cpu.cfs_period_us")
        try directory.write(Data("50000\n".utf8), to: "cg/cpu/slurm/job7/cpu.cfs_quota_us")
        try directory.write(Data("100000\n".utf8), to: "cg/cpu/slurm/job7/cpu.cfs_period_us")
        let groups = ControlGroups(root: directory.path + "/cg", selfCgroup: directory.path + "/self-cgroup")
        #expect(AvailableCores.quota(in: groups) == 1)
    }

    @Test func theCountIsTheAffinityOrTheQuotaWhicheverIsLessAndAtLeastOne() throws {
        let directory = try TemporaryDirectory()
        try directory.write(Data("Cpus_allowed_list:\t0-7\n".utf8), to: "status")
        try directory.write(Data("0::/job\n".utf8), to: "self-cgroup")
        try directory.write(Data("200000 100000\n".utf8), to: "cg/job/cpu.max")
        let status = directory.path + "/status"
        let groups = ControlGroups(root: directory.path + "/cg", selfCgroup: directory.path + "/self-cgroup")
        #expect(AvailableCores.detect(status: status, groups: groups) == 2)
        try directory.write(Data("1000000 100000\n".utf8), to: "cg/job/cpu.max")
        #expect(AvailableCores.detect(status: status, groups: groups) == 8)
        try directory.write(Data("1000 100000\n".utf8), to: "cg/job/cpu.max")
        #expect(AvailableCores.detect(status: status, groups: groups) == 1)
    }

    @Test func theDefaultStageWidthsFollowTheCores() throws {
        let definition = try PipelineDefinition(
            json:
                #"{"version": 1, "inputs": ["a.jpg"], "outputs": [{"name": "s", "steps": [], "encode": {"format": "jpeg"}, "path": "out/{stem}.jpg"}]}"#,
            baseDirectory: URL(fileURLWithPath: "/tmp"), processors: .standard)
        let cores = AvailableCores.count
        #expect(definition.decompress.concurrency == cores)
        #expect(definition.process.concurrency == max(1, cores / 2))
        #expect(definition.encode.concurrency == cores)
        #expect(definition.inFlight == cores + max(1, cores / 2) + cores)
    }
}
