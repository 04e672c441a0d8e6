import { useState } from 'preact/hooks';
import { account, call, client, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Select } from '../components/select.tsx';
import { notify } from '../components/toast.tsx';

/** The workspace the session acts in: a select and a "Switch" button (choosing alone changes nothing). */
export function WorkspaceSwitcher() {
  const { workspaces, active_workspace: active } = account.value!;
  const [chosen, setChosen] = useState(String(active?.id ?? workspaces[0]?.id ?? ''));
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  if (workspaces.length === 0) return <p class="workspace-none">No workspace</p>;
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const result = await call(client.PUT('/v1/account/active-workspace', { body: { workspace_id: Number(chosen) } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    account.value = result.data;
    notify(`You are now in ${result.data.active_workspace?.name ?? 'the workspace'}.`);
  };
  return (
    <form class="workspace-switcher" onSubmit={submit}>
      <Select label="Workspace" value={chosen} onValue={setChosen} options={workspaces.map((w) => ({ value: String(w.id), label: w.name }))} />
      {workspaces.length > 1 && <Button type="submit" busy={busy}>Switch</Button>}
      <ErrorMessage problem={problem} title="The workspace was not switched" />
    </form>
  );
}
