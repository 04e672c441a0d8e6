import { useState } from 'preact/hooks';
import { call, client, managesPeople, type DataOf } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { notify } from '../components/toast.tsx';
import { capitalize, formatDate, formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';
import { ApiKeyForm, type CreatedKey } from './api-key-form.tsx';
import { NewKey } from './new-key.tsx';
import { RotateKey } from './rotate-key.tsx';

type ApiKey = DataOf<'/v1/api-keys', 'get'>[number];

/** Settings → API keys (admins and owners): the workspace's keys; create, rotate, revoke. */
export default function ApiKeys() {
  if (!managesPeople.value) {
    return (
      <Page title="API keys">
        <p>Only admins and owners of the workspace manage its API keys. Ask one of them if a program needs a key.</p>
      </Page>
    );
  }
  return <ManageKeys />;
}

function ManageKeys() {
  const keys = useResource(() => call(client.GET('/v1/api-keys')));
  const [shown, setShown] = useState<{ title: string; key: string } | null>(null);
  const [rotating, setRotating] = useState<ApiKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);

  const created = (key: CreatedKey, title: string) => {
    setShown({ title, key: key.key });
    void keys.reload();
  };

  return (
    <Page title="API keys">
      <p>Programs use API keys to call the Flipbook API for this workspace. Each key holds the scopes it was made with.</p>
      {shown && <NewKey title={shown.title} plainKey={shown.key} onDone={() => setShown(null)} />}
      <section class="card" aria-labelledby="keys">
        <h2 id="keys">Keys</h2>
        {keys.loading && !keys.data && <Loading what="API keys" />}
        <ErrorMessage problem={keys.problem} title="The keys could not be read" />
        {keys.data?.length === 0 && <p class="empty">This workspace has no API keys yet.</p>}
        {keys.data && keys.data.length > 0 && (
          <ul class="item-list" aria-label="API keys">
            {keys.data.map((key) => (
              <li key={key.id} class="item item-key">
                <div>
                  <h3 class="item-title">{key.name}</h3>
                  <dl class="facts facts-inline">
                    <dt>Prefix</dt>
                    <dd><code>{key.prefix}</code></dd>
                    <dt>Scopes</dt>
                    <dd>{key.scopes.join(', ')}</dd>
                    <dt>Mode</dt>
                    <dd>{capitalize(key.mode)}</dd>
                    <dt>Created by</dt>
                    <dd>{key.created_by?.email ?? 'An operator'}</dd>
                    <dt>Created</dt>
                    <dd>{formatDateTime(key.created_at)}</dd>
                    <dt>Last used</dt>
                    <dd>{formatDateTime(key.last_used_at)}</dd>
                    <dt>Expires</dt>
                    <dd>{formatDate(key.expires_at)}</dd>
                    {key.revoked_at && (
                      <>
                        <dt>Revoked</dt>
                        <dd>{formatDateTime(key.revoked_at)}</dd>
                      </>
                    )}
                  </dl>
                </div>
                {!key.revoked_at && (
                  <div class="actions">
                    <Button onClick={() => setRotating(key)}>
                      Rotate<Hidden> key {key.name}</Hidden>
                    </Button>
                    <Button variant="danger" onClick={() => setRevoking(key)}>
                      Revoke<Hidden> key {key.name}</Hidden>
                    </Button>
                  </div>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      <ApiKeyForm onCreated={(key) => created(key, `Your new key “${key.name}”`)} />
      {rotating && (
        <RotateKey
          apiKey={rotating}
          onClose={() => setRotating(null)}
          onRotated={(key) => {
            setRotating(null);
            created(key, `The new key for “${key.name}”`);
          }}
        />
      )}
      {revoking && (
        <Confirm
          title={`Revoke “${revoking.name}”?`}
          confirmLabel="Revoke key"
          onClose={() => setRevoking(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/api-keys/{keyId}', { params: { path: { keyId: revoking.id as never } } }));
            if (result.ok) {
              await keys.reload();
              notify(`The key “${revoking.name}” was revoked.`);
            }
            return result;
          }}
        >
          <p>Programs using this key are refused at once. This cannot be undone.</p>
        </Confirm>
      )}
    </Page>
  );
}
