import { Button } from './button.tsx';

/** Says that the form holds what was typed before (kept in this browser, not saved yet), with a way to throw it away. */
export function DraftNotice({ restored, onDiscard, what = 'changes' }: { restored: boolean; onDiscard: () => void; what?: string }) {
  if (!restored) return null;
  return (
    <div class="alert draft-notice" role="status">
      <p>Your unsaved {what} from before are back in the form. They are kept in this browser until you save them.</p>
      <Button onClick={onDiscard}>Discard unsaved {what}</Button>
    </div>
  );
}
