import { useState } from 'preact/hooks';
import { call, client, role, type DataOf, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Select } from '../components/select.tsx';
import { ALL_SCOPES, scopesFor } from './scopes.ts';

export type CreatedKey = DataOf<'/v1/api-keys', 'post', 201>;

/** The end of the chosen day, in the person's time zone, as the API's date-time. */
function endOfDay(date: string): string {
  const [y, m, d] = date.split('-').map(Number);
  return new Date(y!, m! - 1, d!, 23, 59, 59).toISOString();
}

/** "Create API key": name, scopes, mode and an optional expiry. What was typed stays when the API refuses. */
export function ApiKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const allowed = scopesFor(role.value);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [mode, setMode] = useState('live');
  const [expires, setExpires] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const all = scopes.includes(ALL_SCOPES);
  const toggle = (scope: string, on: boolean) => setScopes((current) => (on ? [...current, scope] : current.filter((s) => s !== scope)));

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const body = {
      name: name.trim(),
      scopes: (all ? [ALL_SCOPES] : scopes) as never,
      mode: mode as never,
      ...(expires ? { expires_at: endOfDay(expires) } : {}),
    };
    const result = await call(client.POST('/v1/api-keys', { body }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setName('');
    setScopes([]);
    setExpires('');
    onCreated(result.data);
  };

  const scopeErrors = fieldErrors(problem, 'scopes');
  return (
    <section class="card" aria-labelledby="create-key">
      <h2 id="create-key">Create API key</h2>
      <form class="stack" onSubmit={submit} noValidate>
        <TextInput label="Name" name="key-name" autoComplete="off" hint="What the key is for, e.g. “Website uploads”." value={name} onValue={setName} errors={fieldErrors(problem, 'name')} />
        <fieldset class="scopes" aria-describedby={scopeErrors ? 'scopes-errors' : undefined}>
          <legend>Scopes</legend>
          <p class="hint">What the key may do.{allowed.all ? '' : ' A key holds only scopes of your own role: owners make keys with workspace:write or all scopes.'}</p>
          {allowed.all && (
            <label class="check check-all">
              <input type="checkbox" checked={all} onChange={(event) => toggle(ALL_SCOPES, event.currentTarget.checked)} />
              All scopes (*)
            </label>
          )}
          <div class="check-grid">
            {allowed.scopes.map((scope) => (
              <label class="check" key={scope}>
                <input type="checkbox" checked={all || scopes.includes(scope)} disabled={all} onChange={(event) => toggle(scope, event.currentTarget.checked)} />
                {scope}
              </label>
            ))}
          </div>
          {scopeErrors && (
            <ul class="field-errors" id="scopes-errors">
              {scopeErrors.map((message) => <li key={message}>{message}</li>)}
            </ul>
          )}
        </fieldset>
        <Select label="Mode" name="key-mode" value={mode} onValue={setMode} hint="Test keys are for trying the API out." errors={fieldErrors(problem, 'mode')} options={[{ value: 'live', label: 'Live' }, { value: 'test', label: 'Test' }]} />
        <TextInput label="Expires" type="date" name="key-expires" hint="Optional: the key stops working at the end of this day." value={expires} onValue={setExpires} errors={fieldErrors(problem, 'expires_at')} />
        <ErrorMessage problem={problem} shownFields={['name', 'scopes', 'mode', 'expires_at']} title="The key was not created" />
        <Button type="submit" variant="primary" busy={busy}>Create API key</Button>
      </form>
    </section>
  );
}
