import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { call, client, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Page } from '../components/page.tsx';
import { GrantForm, type Request } from './grant-form.tsx';

/** /app/oauth/device: the code a device (a plugin, a command-line tool) shows, then the app's request (docs/oauth.md). */
export default function Device() {
  const { query } = useLocation();
  const [code, setCode] = useState(query.user_code ?? '');
  const [request, setRequest] = useState<Request | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const look = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const result = await call(client.POST('/v1/oauth/device', { body: { user_code: code.trim() } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setRequest(result.data);
  };
  return (
    <Page title="Connect a device">
      {done && <p role="status">{done}</p>}
      {!done && !request && (
        <form onSubmit={(event) => void look(event)}>
          <TextInput label="Code" value={code} onValue={setCode} hint="The code the app or device shows you." autocomplete="off" required />
          <ErrorMessage problem={problem} title="This code was not found: it may have expired or been used. Check it, or start again on the device." />
          <div class="actions"><Button type="submit" variant="primary" busy={busy}>Continue</Button></div>
        </form>
      )}
      {!done && request && (
        <GrantForm
          request={request}
          onAllow={async (workspaceId) => {
            const result = await call(client.POST('/v1/oauth/device/approve', { body: { user_code: code.trim(), workspace_id: workspaceId } }));
            if (!result.ok) return result.problem;
            setDone(`${request.app.name} is connected. You can go back to the device.`);
            return null;
          }}
          onDeny={async () => {
            const result = await call(client.POST('/v1/oauth/device/deny', { body: { user_code: code.trim() } }));
            if (!result.ok) return result.problem;
            setDone(`${request.app.name} was refused.`);
            return null;
          }}
        />
      )}
    </Page>
  );
}
