import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { Problem, Result } from '../api.ts';
import { Button } from './button.tsx';
import { Dialog } from './dialog.tsx';
import { ErrorMessage } from './error-message.tsx';

interface ConfirmProps {
  title: string;
  children: ComponentChildren;
  /** The button that does it ("Remove", "Revoke"). */
  confirmLabel: string;
  /** Does it; the dialog closes on success and shows the API's error otherwise. */
  onConfirm: () => Promise<Result<unknown>>;
  onClose: () => void;
}

/** "Are you sure?" for what cannot be undone, with the API's answer shown in the dialog when it refuses. */
export function Confirm({ title, children, confirmLabel, onConfirm, onClose }: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const confirm = async () => {
    if (busy) return;
    setBusy(true);
    const result = await onConfirm();
    setBusy(false);
    if (result.ok) onClose();
    else setProblem(result.problem);
  };
  return (
    <Dialog title={title} onClose={onClose}>
      {children}
      <ErrorMessage problem={problem} />
      <div class="actions">
        <Button variant="danger" onClick={confirm} busy={busy}>{confirmLabel}</Button>
        <Button onClick={onClose}>Cancel</Button>
      </div>
    </Dialog>
  );
}
