import { startRegistration } from '@simplewebauthn/browser';
import { useState } from 'preact/hooks';
import { call, client, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { notify } from '../components/toast.tsx';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';
import { passkeyProblem } from '../sign-in/passkey-errors.ts';

/** The account's passkeys: the list, "Add a passkey" (a WebAuthn registration) and "Remove". */
export function Passkeys({ canAdd }: { canAdd: boolean }) {
  const passkeys = useResource(() => call(client.GET('/v1/account/passkeys')));
  const [name, setName] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [removeProblem, setRemoveProblem] = useState<Problem | null>(null);

  const add = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy('add');
    setProblem(null);
    try {
      const options = await call(client.POST('/v1/account/passkeys/options'));
      if (!options.ok) return setProblem(options.problem);
      let response;
      try {
        response = await startRegistration({ optionsJSON: options.data.options as never });
      } catch (error) {
        return setProblem(passkeyProblem(error, 'registration'));
      }
      const label = name.trim();
      const saved = await call(client.POST('/v1/account/passkeys', { body: { challenge_id: options.data.challenge_id, response: response as never, ...(label ? { name: label } : {}) } }));
      if (!saved.ok) return setProblem(saved.problem);
      setName('');
      await passkeys.reload();
      notify(`The passkey “${saved.data.name}” was added.`);
    } finally {
      setBusy(null);
    }
  };

  const remove = async (id: string | number, label: string) => {
    if (busy) return;
    setBusy(String(id));
    const result = await call(client.DELETE('/v1/account/passkeys/{passkeyId}', { params: { path: { passkeyId: id as never } } }));
    setBusy(null);
    if (!result.ok) return setRemoveProblem(result.problem);
    setRemoveProblem(null);
    await passkeys.reload();
    notify(`The passkey “${label}” was removed.`);
  };

  return (
    <section class="card" aria-labelledby="passkeys">
      <h2 id="passkeys">Passkeys</h2>
      <p>A passkey signs you in with this device's screen lock or a security key, without an e-mail.</p>
      {passkeys.loading && !passkeys.data && <Loading what="passkeys" />}
      <ErrorMessage problem={passkeys.problem} title="Your passkeys could not be read" />
      {passkeys.data && passkeys.data.length === 0 && <p class="empty">You have no passkeys yet.</p>}
      {passkeys.data && passkeys.data.length > 0 && (
        <ul class="item-list" aria-label="Your passkeys">
          {passkeys.data.map((passkey) => (
            <li key={passkey.id} class="item">
              <div>
                <p class="item-title">{passkey.name}</p>
                <p class="item-meta">Added {formatDateTime(passkey.created_at)} · last used {formatDateTime(passkey.last_used_at)}</p>
              </div>
              <Button variant="danger" busy={busy === String(passkey.id)} onClick={() => void remove(passkey.id, passkey.name)}>
                Remove<Hidden> passkey {passkey.name}</Hidden>
              </Button>
            </li>
          ))}
        </ul>
      )}
      <ErrorMessage problem={removeProblem} title="The passkey was not removed" />
      {!canAdd && <p>Passkeys cannot be added here: the service must be reached by a domain name (not an IP address) for browsers to make them.</p>}
      {canAdd && (
        <form class="stack" onSubmit={add} noValidate>
          <TextInput label="Passkey name" hint="Optional: to tell your passkeys apart, e.g. “Work laptop”." name="passkey-name" autoComplete="off" value={name} onValue={setName} errors={fieldErrors(problem, 'name')} />
          <ErrorMessage problem={problem} shownFields={['name']} title="No passkey was added" />
          <Button type="submit" variant="primary" busy={busy === 'add'}>Add a passkey</Button>
        </form>
      )}
    </section>
  );
}
