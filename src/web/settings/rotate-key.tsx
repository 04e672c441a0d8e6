import { useState } from 'preact/hooks';
import { call, client, type DataOf, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { Dialog } from '../components/dialog.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { Select } from '../components/select.tsx';
import type { CreatedKey } from './api-key-form.tsx';

type ApiKey = DataOf<'/v1/api-keys', 'get'>[number];

const OVERLAPS = [
  { value: '0', label: 'None: the old key stops now' },
  { value: '1', label: '1 hour' },
  { value: '24', label: '24 hours' },
  { value: '72', label: '3 days' },
  { value: '168', label: '7 days' },
];

/** "Rotate": a new key with the same name, scopes and mode; the old one keeps working for the overlap chosen. */
export function RotateKey({ apiKey, onRotated, onClose }: { apiKey: ApiKey; onRotated: (key: CreatedKey) => void; onClose: () => void }) {
  const [overlap, setOverlap] = useState('0');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const rotate = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const result = await call(client.POST('/v1/api-keys/{keyId}/rotate', { params: { path: { keyId: apiKey.id as never } }, body: { overlap_hours: Number(overlap) } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    onRotated(result.data);
  };
  return (
    <Dialog title={`Rotate “${apiKey.name}”`} onClose={onClose}>
      <form class="stack" onSubmit={rotate}>
        <p>A new key replaces this one, with the same name, scopes and mode. Give the programs that use the old key time to change over.</p>
        <Select label="Keep the old key working for" name="overlap" value={overlap} onValue={setOverlap} options={OVERLAPS} errors={problem?.details.overlap_hours} />
        <ErrorMessage problem={problem} shownFields={['overlap_hours']} title="The key was not rotated" />
        <div class="actions">
          <Button type="submit" variant="primary" busy={busy}>Rotate key</Button>
          <Button onClick={onClose}>Cancel</Button>
        </div>
      </form>
    </Dialog>
  );
}
