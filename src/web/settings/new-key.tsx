import { useEffect, useRef } from 'preact/hooks';
import { Button } from '../components/button.tsx';
import { CopyField } from '../components/copy-field.tsx';

/** A plain key, shown once after it is made or rotated. */
export function NewKey({ title, plainKey, onDone }: { title: string; plainKey: string; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [plainKey]);
  return (
    <section class="card card-highlight" aria-labelledby="new-key">
      <h2 id="new-key" ref={heading} tabIndex={-1}>{title}</h2>
      <p>Copy the key now and keep it somewhere safe: it will not be shown again.</p>
      <CopyField label="API key" value={plainKey} />
      <Button onClick={onDone}>Done</Button>
    </section>
  );
}
