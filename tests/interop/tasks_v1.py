"""MCP Tasks with the Python MCP SDK 1.x client (`session.experimental`): a task-augmented
`agent action=spawn` through tuic-bridge answers a CreateTaskResult, the task is polled with
tasks/get, and tasks/result blocks until the agent's run ends and answers the spawn's result.
Another tool called as a task is refused with -32601.
Usage: tasks_v1.py BRIDGE --socket SOCKET"""

import asyncio
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.types import CallToolResult

import scenario


async def main(argv):
    async with stdio_client(StdioServerParameters(command=argv[0], args=argv[1:])) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.capabilities.tasks.requests.tools.call is not None, init.capabilities
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert tools["agent"].execution.taskSupport == "optional", tools["agent"].execution
            # The prompt is the final argument: `sh -c 'exit 0' <prompt>` ends the run at once.
            spawn = {"action": "spawn", "binary_path": "/bin/sh", "args": ["-c", "exit 0"], "prompt": "interop task"}
            created = await session.experimental.call_tool_as_task("agent", spawn)
            task_id = created.task.taskId
            assert created.task.status in ("working", "completed"), created
            final = await session.experimental.get_task_result(task_id, CallToolResult)
            err, value = scenario.decode(final)
            assert not err and value["task_id"] == task_id and value["exit_code"] == 0, value
            status = await session.experimental.get_task(task_id)
            assert status.status == "completed", status
            try:
                await session.experimental.call_tool_as_task("session", {"action": "list"})
                raise AssertionError("session called as a task was not refused")
            except McpError as e:
                assert e.error.code == -32601, e.error
    print("ok: mcp 1.x tasks through the bridge")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
