"""kafka_ops.kafka.kafka_rolling_restart_play (the collection's; role kafka_rolling_restart's action_plugins/ links
here for a checkout, where the role runs from roles_path: a role inside a collection gets no plugins of its own).

What the play running the roll says about failures, for the roll's refusal of a play that would let it go on
without a broker (tasks/begin.yml). Ansible exposes `serial` through ansible_play_batch, but no variable holds
`any_errors_fatal`: the task's own attribute does, resolved as the linear strategy resolves it to decide
whether one host's failure ends the play for all (the task, its static parents, then the play:
ansible.playbook.block.Block._get_parent_attribute; strategy/linear.py reads `task.any_errors_fatal`)."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        result.update(
            changed=False,
            any_errors_fatal=bool(self._task.any_errors_fatal),
            max_fail_percentage=self._task.get_play().max_fail_percentage,
        )
        return result
