"""The container backend: each node is a Testcontainers ``DockerContainer``.

Containers use the host's network (``network_mode=host``), so a node binds 127.0.0.1 on
the port in its config file exactly as a process would, and the addresses Redis announces
(replicas, cluster, sentinels) are the ones clients use. The node's directory is
bind-mounted at the same path, so its config file reads the same as in the process
backend and what Redis rewrites (``nodes.conf``, ``sentinel.conf``) survives a restart.
Containers run as the calling user, so those files stay the user's to clean up.

Pause and resume use ``docker pause``/``unpause`` (the cgroup freezer). Every container
carries labels naming its topology, its owner process and whether it is detached, which
is what the leftover sweep (`redisson_py.testing.topologies.cleanup`) goes by; Testcontainers'
own reaper (Ryuk) is disabled because its image usually cannot be pulled here.

This is the only module that imports Testcontainers.
"""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

# Ryuk's image cannot be pulled where no registry answers; our sweep does its job. Set
# before Testcontainers reads its configuration.
os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

import docker.errors
from testcontainers.core.container import DockerContainer

from redisson_py.testing.backends.base import LaunchPlan, NodeRuntime
from redisson_py.testing.backends.docker_engine import docker_client
from redisson_py.testing.backends.image import resolve_image
from redisson_py.testing.errors import TopologyError

__all__ = ["LABEL_PREFIX", "ContainerBackend", "ContainerRuntime", "labels_for"]

LABEL_PREFIX = "org.redisson-py"
LABEL_HARNESS = f"{LABEL_PREFIX}.harness"
LABEL_TOPOLOGY = f"{LABEL_PREFIX}.topology"
LABEL_NODE = f"{LABEL_PREFIX}.node"
LABEL_OWNER_PID = f"{LABEL_PREFIX}.owner-pid"
LABEL_OWNER_START = f"{LABEL_PREFIX}.owner-start"
LABEL_DETACHED = f"{LABEL_PREFIX}.detached"


def labels_for(plan: LaunchPlan) -> dict[str, str]:
    """The labels a node's container carries (see the module docstring)."""
    return {
        LABEL_HARNESS: "1",
        LABEL_TOPOLOGY: plan.topology_id,
        LABEL_NODE: plan.node_name,
        LABEL_OWNER_PID: str(plan.owner.pid),
        LABEL_OWNER_START: str(plan.owner.start_time),
        LABEL_DETACHED: "1" if plan.detached else "0",
    }


def container_name(plan: LaunchPlan) -> str:
    return f"redisson-py-{plan.topology_id}-{plan.node_name}"


class ContainerRuntime(NodeRuntime):
    """A node run in a container; see the module docstring."""

    def __init__(self, image: str, plan: LaunchPlan):
        self._image = image
        self._plan = plan
        self._container: DockerContainer | None = None
        self._final_log = ""

    @property
    def container_id(self) -> str | None:
        if self._container is None:
            return None
        try:
            return str(self._container.get_container_id())
        except Exception:
            return None

    def _wrapped(self) -> Any:
        assert self._container is not None
        return self._container.get_wrapped_container()

    def start(self) -> None:
        if self._container is not None:
            # Started before: bring the same container (same mount, same command) back.
            self._wrapped().start()
            return
        plan = self._plan
        command = [str(plan.config_path)]
        if plan.kind == "sentinel":
            command.append("--sentinel")
        container = (
            DockerContainer(self._image)
            .with_command(command)
            .with_name(container_name(plan))
            .with_volume_mapping(str(plan.directory), str(plan.directory), "rw")
            .with_kwargs(
                # `network` (not `network_mode`) also stops Testcontainers from guessing a
                # docker-in-docker network.
                network="host",
                # Bypass images' entrypoint scripts (redis:7's switches to another user,
                # who could not write our directory); run as the caller.
                entrypoint=["redis-server"],
                user=f"{os.getuid()}:{os.getgid()}",
                labels=labels_for(plan),
                working_dir=str(plan.directory),
            )
        )
        # Assigned before start(): a container created but failing to start is still ours
        # to remove.
        self._container = container
        try:
            container.start()
        except docker.errors.APIError as exc:
            raise TopologyError(
                f"Docker could not start the container for node {plan.node_name} "
                f"({exc.explanation or exc}); see `docker logs {container_name(plan)}`."
            ) from None

    def _status(self) -> str:
        if self._container is None:
            return "absent"
        try:
            wrapped = self._wrapped()
            wrapped.reload()
            return str(wrapped.status)
        except docker.errors.NotFound:
            return "absent"
        except Exception:
            return "absent"

    def kill(self) -> None:
        status = self._status()
        if status == "paused":
            self._wrapped().unpause()
        if status in ("running", "paused", "restarting"):
            with contextlib.suppress(docker.errors.APIError):
                self._wrapped().kill()
            self._wait_not_running(10.0)

    def terminate(self, timeout: float) -> None:
        status = self._status()
        if status == "paused":
            self._wrapped().unpause()
        if status in ("running", "paused", "restarting"):
            with contextlib.suppress(docker.errors.APIError):
                self._wrapped().stop(timeout=max(1, int(timeout)))
            self._wait_not_running(timeout + 5.0)

    def _wait_not_running(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self._status() in ("running", "paused"):
            time.sleep(0.02)

    def pause(self) -> None:
        if self._status() == "running":
            self._wrapped().pause()

    def resume(self) -> None:
        if self._status() == "paused":
            self._wrapped().unpause()

    def is_running(self) -> bool:
        return self._status() in ("running", "paused", "restarting")

    def is_paused(self) -> bool:
        return self._status() == "paused"

    def exit_description(self) -> str | None:
        if self._container is None:
            return "not started"
        status = self._status()
        if status in ("running", "paused", "restarting"):
            return None
        if status == "absent":
            return "removed"
        code = self._wrapped().attrs.get("State", {}).get("ExitCode")
        return f"exited with code {code}"

    def log(self) -> str:
        if self._container is None:
            return self._final_log
        try:
            return bytes(self._wrapped().logs()).decode("utf-8", errors="replace")
        except Exception:
            return self._final_log

    def remove(self) -> None:
        if self._container is None:
            return
        self._final_log = self.log()
        container, self._container = self._container, None
        with contextlib.suppress(docker.errors.NotFound):
            try:
                wrapped = container.get_wrapped_container()
            except Exception:
                wrapped = None
            if wrapped is not None:
                with contextlib.suppress(docker.errors.APIError):
                    wrapped.reload()
                    if wrapped.status == "paused":
                        wrapped.unpause()
                wrapped.remove(force=True, v=True)
        with contextlib.suppress(Exception):
            container.get_docker_client().client.close()

    def record(self) -> dict[str, Any]:
        return {"container_id": self.container_id, "container_name": container_name(self._plan)}


class ContainerBackend:
    """Runs nodes in containers of the image
    `resolve_image` picks.

    Raises [`TopologyError`][redisson_py.testing.TopologyError] (one sentence) when no
    Docker engine answers.
    """

    name = "container"
    parallel_launch = True

    def __init__(self, image: str | None = None):
        client = docker_client()
        try:
            self.image = image or resolve_image(client)
        finally:
            client.close()

    def create(self, plan: LaunchPlan) -> ContainerRuntime:
        return ContainerRuntime(self.image, plan)

    def describe(self) -> str:
        return f"containers of {self.image}"

    def close(self) -> None:
        return None
