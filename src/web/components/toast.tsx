import { signal } from '@preact/signals';

/** The last thing that happened ("Invitation sent to ann@example.com."), read out politely. */
const notice = signal<{ id: number; text: string } | null>(null);
let next = 1;
let timer: ReturnType<typeof setTimeout> | undefined;

export function notify(text: string): void {
  notice.value = { id: next++, text };
  clearTimeout(timer);
  timer = setTimeout(() => (notice.value = null), 10_000);
}

/** One polite live region for the whole application: present from the start so that what it says is announced. */
export function Toaster() {
  return (
    <div class="toaster" role="status" aria-live="polite">
      {notice.value && (
        <p class="toast" key={notice.value.id}>
          {notice.value.text}
        </p>
      )}
    </div>
  );
}
