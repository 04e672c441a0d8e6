import { useState } from 'preact/hooks';
import { call, client, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';

/** Settings → Connected apps: the OAuth apps one allowed, in which workspace, with what; disconnect one (docs/oauth.md). */
export default function ConnectedApps() {
  const apps = useResource(() => call(client.GET('/v1/account/connected-apps')));
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);

  const disconnect = async (grantId: string, name: string) => {
    if (busy) return;
    setBusy(grantId);
    const result = await call(client.DELETE('/v1/account/connected-apps/{grantId}', { params: { path: { grantId } } }));
    setBusy(null);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    await apps.reload();
    notify(`${name} is disconnected: its tokens stopped working.`);
  };

  return (
    <Page title="Connected apps">
      <p>Apps you allowed to act for you in a workspace. Disconnect any you no longer use.</p>
      {apps.loading && !apps.data && <Loading what="connected apps" />}
      <ErrorMessage problem={apps.problem} title="Your connected apps could not be read" />
      {apps.data && apps.data.length === 0 && <p>No app is connected.</p>}
      {apps.data && apps.data.length > 0 && (
        <Table
          caption="Connected apps"
          hideCaption
          head={
            <tr>
              <th scope="col">App</th>
              <th scope="col">Workspace</th>
              <th scope="col">Can</th>
              <th scope="col">Connected</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          }
        >
          {apps.data.map((connected) => (
            <tr key={connected.grant_id}>
              <td>{connected.app.name}</td>
              <td>{connected.workspace.name}</td>
              <td>{connected.scopes.join(', ')}</td>
              <td>{connected.connected_at ? formatDateTime(connected.connected_at) : ''}</td>
              <td>
                <Button busy={busy === connected.grant_id} onClick={() => void disconnect(connected.grant_id, connected.app.name)}>
                  Disconnect<Hidden>{` ${connected.app.name} from ${connected.workspace.name}`}</Hidden>
                </Button>
              </td>
            </tr>
          ))}
        </Table>
      )}
      <ErrorMessage problem={problem} title="The app was not disconnected" />
    </Page>
  );
}
