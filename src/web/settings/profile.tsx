import { useState } from 'preact/hooks';
import { account, call, client, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Page } from '../components/page.tsx';
import { notify } from '../components/toast.tsx';
import { useResource } from '../resource.ts';
import { Passkeys } from './passkeys.tsx';
import { PasswordForm } from './password.tsx';

/** Settings → Profile: one's name and address, passkeys, and a password when the service allows them. */
export default function Profile() {
  const me = account.value!;
  const methods = useResource(() => call(client.GET('/v1/auth/methods')));
  const [name, setName] = useState(me.user.name ?? '');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const save = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const result = await call(client.PATCH('/v1/account', { body: { name: name.trim() || null } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    account.value = result.data;
    notify('Your name was saved.');
  };
  return (
    <Page title="Profile">
      <section class="card" aria-labelledby="details">
        <h2 id="details">Your details</h2>
        <dl class="facts">
          <dt>E-mail address</dt>
          <dd>{me.user.email}</dd>
        </dl>
        <form class="stack" onSubmit={save} noValidate>
          <TextInput label="Name" name="name" autoComplete="name" value={name} onValue={setName} errors={fieldErrors(problem, 'name')} />
          <ErrorMessage problem={problem} shownFields={['name']} title="Your name was not saved" />
          <Button type="submit" variant="primary" busy={busy}>Save name</Button>
        </form>
      </section>
      <Passkeys canAdd={methods.data?.passkey ?? false} />
      {methods.data?.password && <PasswordForm hasPassword={me.user.has_password} />}
      <ErrorMessage problem={methods.problem} title="Whether passwords are on could not be read" />
    </Page>
  );
}
