import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { account, call, client, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { deviceName, formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';

/** Settings → Sessions: where one is signed in; sign out of one, or everywhere. */
export default function Sessions() {
  const { route } = useLocation();
  const sessions = useResource(() => call(client.GET('/v1/account/sessions')));
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [confirmAll, setConfirmAll] = useState(false);

  const signedOutHere = () => {
    route('/app/sign-in', true);
    account.value = null;
  };

  const end = async (id: string, current: boolean, device: string) => {
    if (busy) return;
    setBusy(id);
    const result = await call(client.DELETE('/v1/account/sessions/{sessionId}', { params: { path: { sessionId: id as never } } }));
    setBusy(null);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    if (current) return signedOutHere();
    await sessions.reload();
    notify(`Signed out of ${device}.`);
  };

  return (
    <Page title="Sessions">
      <p>These are the browsers and devices signed in to your account. Sign out of any you do not recognise.</p>
      {sessions.loading && !sessions.data && <Loading what="sessions" />}
      <ErrorMessage problem={sessions.problem} title="Your sessions could not be read" />
      {sessions.data && (
        <Table
          caption="Signed-in sessions"
          hideCaption
          head={
            <tr>
              <th scope="col">Device</th>
              <th scope="col">Signed in</th>
              <th scope="col">Last active</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          }
        >
          {sessions.data.map((session) => {
            const device = deviceName(session.user_agent);
            return (
              <tr key={session.id}>
                <td>
                  <span title={session.user_agent ?? undefined}>{device}</span>
                  {session.current && <span class="badge">This device</span>}
                </td>
                <td>{formatDateTime(session.created_at)}</td>
                <td>{formatDateTime(session.last_seen_at)}</td>
                <td>
                  <Button busy={busy === String(session.id)} onClick={() => void end(String(session.id), session.current, device)}>
                    Sign out<Hidden>{session.current ? ' of this device' : ` of ${device}, signed in ${formatDateTime(session.created_at)}`}</Hidden>
                  </Button>
                </td>
              </tr>
            );
          })}
        </Table>
      )}
      <ErrorMessage problem={problem} title="The session was not ended" />
      <div class="actions">
        <Button variant="danger" onClick={() => setConfirmAll(true)}>Sign out everywhere</Button>
      </div>
      {confirmAll && (
        <Confirm
          title="Sign out everywhere?"
          confirmLabel="Sign out everywhere"
          onClose={() => setConfirmAll(false)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/account/sessions'));
            if (result.ok) signedOutHere();
            return result;
          }}
        >
          <p>Every session of your account ends, this one included. You will need to sign in again on each device.</p>
        </Confirm>
      )}
    </Page>
  );
}
