import { useState } from 'preact/hooks';
import { call, client, managesPeople, type DataOf, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { CopyField } from '../components/copy-field.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { notify } from '../components/toast.tsx';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';

type OAuthApp = DataOf<'/v1/oauth-apps', 'get'>[number];
type CreatedApp = DataOf<'/v1/oauth-apps', 'post', 201>;

/** Settings → OAuth apps (admins and owners): integrations registered by this workspace; register, delete (docs/oauth.md). */
export default function OAuthApps() {
  if (!managesPeople.value) {
    return (
      <Page title="OAuth apps">
        <p>Only admins and owners of the workspace register OAuth apps.</p>
      </Page>
    );
  }
  return <ManageApps />;
}

function ManageApps() {
  const apps = useResource(() => call(client.GET('/v1/oauth-apps')));
  const [created, setCreated] = useState<CreatedApp | null>(null);
  const [deleting, setDeleting] = useState<OAuthApp | null>(null);
  return (
    <Page title="OAuth apps">
      <p>An integration registered here asks people for access with OAuth 2 instead of an API key: each person allows it in one of their workspaces, with the scopes of their role.</p>
      {created && <NewApp app={created} onDone={() => setCreated(null)} />}
      <section class="card" aria-labelledby="apps">
        <h2 id="apps">Registered apps</h2>
        {apps.loading && !apps.data && <Loading what="OAuth apps" />}
        <ErrorMessage problem={apps.problem} title="The apps could not be read" />
        {apps.data?.length === 0 && <p class="empty">This workspace has registered no app.</p>}
        {apps.data && apps.data.length > 0 && (
          <ul class="item-list" aria-label="OAuth apps">
            {apps.data.map((app) => (
              <li key={app.id} class="item">
                <div>
                  <h3 class="item-title">{app.name}</h3>
                  <dl class="facts facts-inline">
                    <dt>Client ID</dt>
                    <dd><code>{app.client_id}</code></dd>
                    <dt>Type</dt>
                    <dd>{app.public ? 'Public (PKCE, no secret)' : 'Confidential (with a secret)'}</dd>
                    <dt>Redirect URIs</dt>
                    <dd>{app.redirect_uris.length ? app.redirect_uris.join(', ') : 'None (device flow only)'}</dd>
                    <dt>Registered</dt>
                    <dd>{formatDateTime(app.created_at)}</dd>
                  </dl>
                </div>
                <div class="actions">
                  <Button variant="danger" onClick={() => setDeleting(app)}>
                    Delete<Hidden> app {app.name}</Hidden>
                  </Button>
                </div>
              </li>
            ))}
          </ul>
        )}
      </section>
      <AppForm onCreated={(app) => { setCreated(app); void apps.reload(); }} />
      {deleting && (
        <Confirm
          title={`Delete “${deleting.name}”?`}
          confirmLabel="Delete app"
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/oauth-apps/{appId}', { params: { path: { appId: deleting.id } } }));
            if (result.ok) {
              await apps.reload();
              notify(`The app “${deleting.name}” was deleted.`);
            }
            return result;
          }}
        >
          <p>Every person who connected it loses the connection, and its tokens stop working at once. This cannot be undone.</p>
        </Confirm>
      )}
    </Page>
  );
}

/** The new app's credentials, shown once. */
function NewApp({ app, onDone }: { app: CreatedApp; onDone: () => void }) {
  return (
    <section class="card card-highlight" aria-labelledby="new-app">
      <h2 id="new-app" tabIndex={-1} ref={(heading) => heading?.focus()}>{`“${app.name}” is registered`}</h2>
      <CopyField label="Client ID" value={app.client_id} />
      {app.client_secret && (
        <>
          <p>Copy the secret now and keep it on the app's server: it will not be shown again.</p>
          <CopyField label="Client secret" value={app.client_secret} />
        </>
      )}
      <Button onClick={onDone}>Done</Button>
    </section>
  );
}

/** "Register app": name, redirect URIs (one a line), public or confidential. What was typed stays when the API refuses. */
function AppForm({ onCreated }: { onCreated: (app: CreatedApp) => void }) {
  const [name, setName] = useState('');
  const [uris, setUris] = useState('');
  const [isPublic, setPublic] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const redirect_uris = uris.split('\n').map((u) => u.trim()).filter(Boolean);
    const result = await call(client.POST('/v1/oauth-apps', { body: { name: name.trim(), redirect_uris, public: isPublic } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setName('');
    setUris('');
    setPublic(false);
    onCreated(result.data);
  };
  // The API names a bad URI by its place in the list (redirect_uris.0); they are shown together under the field.
  const uriErrors = Object.keys(problem?.details ?? {}).filter((k) => k.startsWith('redirect_uris')).flatMap((k) => fieldErrors(problem, k) ?? []);
  return (
    <section class="card" aria-labelledby="register-app">
      <h2 id="register-app">Register app</h2>
      <form class="stack" onSubmit={submit} noValidate>
        <TextInput label="Name" name="app-name" autoComplete="off" hint="Shown to people on the consent screen." value={name} onValue={setName} errors={fieldErrors(problem, 'name')} />
        <Field label="Redirect URIs" hint="One a line, matched exactly. Leave empty for an app that uses the device flow only." errors={uriErrors.length ? uriErrors : undefined}>
          {(control) => <textarea {...control} name="app-redirect-uris" rows={3} value={uris} onInput={(event) => setUris(event.currentTarget.value)} />}
        </Field>
        <label class="check">
          <input type="checkbox" checked={isPublic} onChange={(event) => setPublic(event.currentTarget.checked)} />
          Public app: it cannot keep a secret (a browser, mobile or command-line app)
        </label>
        <ErrorMessage problem={problem} shownFields={['name', ...Object.keys(problem?.details ?? {}).filter((k) => k.startsWith('redirect_uris'))]} title="The app was not registered" />
        <Button type="submit" variant="primary" busy={busy}>Register app</Button>
      </form>
    </section>
  );
}
