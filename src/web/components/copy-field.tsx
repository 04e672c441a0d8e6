import { useId, useRef, useState } from 'preact/hooks';
import { Button } from './button.tsx';

/** A read-only value with a visible label and a "Copy" button that says when it copied. */
export function CopyField({ label, value }: { label: string; value: string }) {
  const id = useId();
  const input = useRef<HTMLInputElement>(null);
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setStatus('Copied.');
    } catch {
      // No clipboard permission (an insecure origin, a refused prompt): select it for the person to copy.
      input.current?.select();
      setStatus('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return (
    <div class="field copy-field">
      <label for={id}>{label}</label>
      <div class="copy-row">
        <input id={id} ref={input} type="text" readOnly value={value} spellcheck={false} autoComplete="off" onFocus={(event) => event.currentTarget.select()} />
        <Button onClick={copy}>Copy</Button>
      </div>
      <p class="hint" role="status">{status}</p>
    </div>
  );
}
