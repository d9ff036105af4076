"""Per-session cgroups on a cgroup v2 tree (a folder standing in for /sys/fs/cgroup, since a host
may offer only v1; test/memory-limit.test.ts runs the real thing where the host allows)."""

import os
import shutil
import tempfile
import unittest
from unittest import mock

from workflow_sdk.runner import cgroups


def read(path):
    with open(path) as f:
        return f.read()


class CgroupV2Test(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.root, True)
        for name, text in (("cgroup.controllers", "cpu memory pids"), ("cgroup.subtree_control", "")):
            with open(os.path.join(self.root, name), "w") as f:
                f.write(text)
        patcher = mock.patch.object(cgroups, "CGROUP", self.root)
        patcher.start()
        self.addCleanup(patcher.stop)

    def test_a_server_folder_with_memory_and_pids_enabled_for_its_children(self):
        folders = cgroups.server_folders(4242, {"memory", "pids"})
        folder = os.path.join(self.root, "hookline-4242")
        self.assertEqual(folders, {"memory": (2, folder), "pids": (2, folder)})
        # The controllers were asked for (a real cgroupfs keeps the list; this file keeps the last).
        self.assertIn(read(os.path.join(folder, "cgroup.subtree_control")), ("+memory", "+pids"))

    def test_a_session_joins_its_own_cgroup_with_memory_max_and_no_swap(self):
        folders = cgroups.server_folders(4242, {"memory", "pids"})
        joined = cgroups.join(folders, {"memory": 128 * 1024 * 1024, "pids": 40})
        path = os.path.join(self.root, "hookline-4242", str(os.getpid()))
        self.assertEqual(joined, {"memory": path, "pids": path})
        self.assertEqual(read(os.path.join(path, "memory.max")), str(128 * 1024 * 1024))
        self.assertEqual(read(os.path.join(path, "memory.swap.max")), "0")
        self.assertEqual(read(os.path.join(path, "pids.max")), "40")
        self.assertEqual(read(os.path.join(path, "cgroup.procs")), "0")

    def test_an_oom_kill_and_a_refused_charge_are_read_from_memory_events(self):
        folders = cgroups.server_folders(4242, {"memory"})
        cgroups.join(folders, {"memory": 1 << 27})
        path = os.path.join(self.root, "hookline-4242", str(os.getpid()))
        self.assertFalse(cgroups.oom_killed(folders, os.getpid()))
        with open(os.path.join(path, "memory.events"), "w") as f:
            f.write("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\noom_group_kill 0\n")
        self.assertTrue(cgroups.oom_killed(folders, os.getpid()))
        self.assertTrue(cgroups.hit("memory", path))

    def test_off_in_the_environment_makes_none(self):
        with mock.patch.dict(os.environ, {"HOOKLINE_SESSION_CGROUPS": "off"}):
            self.assertEqual(cgroups.server_folders(4242, {"memory", "pids"}), {})

    def test_a_controller_the_host_does_not_offer_is_not_used(self):
        with open(os.path.join(self.root, "cgroup.controllers"), "w") as f:
            f.write("cpu pids")
        with mock.patch.object(cgroups, "_v1_parent", return_value=None):
            folders = cgroups.server_folders(4242, {"memory", "pids"})
        self.assertEqual(set(folders), {"pids"})


if __name__ == "__main__":
    unittest.main()
