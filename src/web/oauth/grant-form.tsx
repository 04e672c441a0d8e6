import { useState } from 'preact/hooks';
import type { Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Select } from '../components/select.tsx';

export interface Request {
  app: { client_id: string; name: string };
  scopes: { scope: string; description: string }[];
  workspaces: { id: number; name: string; role: string; granted_scopes: string[] }[];
}

/** What an app asks, the workspace to allow it in, and the two answers: shared by the consent screen and the device page. */
export function GrantForm({ request, onAllow, onDeny }: {
  request: Request;
  onAllow: (workspaceId: number) => Promise<Problem | null>;
  onDeny: () => Promise<Problem | null>;
}) {
  const [workspace, setWorkspace] = useState(String(request.workspaces[0]?.id ?? ''));
  const [busy, setBusy] = useState<'allow' | 'deny' | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const chosen = request.workspaces.find((w) => String(w.id) === workspace);
  const answer = async (which: 'allow' | 'deny') => {
    if (busy) return;
    setBusy(which);
    const failed = which === 'allow' ? await onAllow(Number(workspace)) : await onDeny();
    setBusy(null);
    setProblem(failed);
  };
  return (
    <form onSubmit={(event) => { event.preventDefault(); void answer('allow'); }}>
      <p><strong>{request.app.name}</strong> asks to act for you in a workspace. It will be able to:</p>
      <ul>
        {request.scopes.map((s) => (
          <li key={s.scope}>
            {s.description}
            {chosen && !chosen.granted_scopes.includes(s.scope) && <span class="badge">Not with your role ({chosen.role})</span>}
          </li>
        ))}
      </ul>
      {request.workspaces.length === 0
        ? <p>You are not a member of any workspace, so there is nothing to allow.</p>
        : (
          <Select
            label="Workspace"
            value={workspace}
            onValue={setWorkspace}
            options={request.workspaces.map((w) => ({ value: String(w.id), label: `${w.name} (${w.role})` }))}
            hint="The app acts only in this workspace, with what your role there allows."
          />
        )}
      <ErrorMessage problem={problem} title="Your answer was not taken" />
      <div class="actions">
        <Button type="submit" variant="primary" busy={busy === 'allow'} disabled={request.workspaces.length === 0}>Allow</Button>
        <Button busy={busy === 'deny'} onClick={() => void answer('deny')}>Deny</Button>
      </div>
    </form>
  );
}
