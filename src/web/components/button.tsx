import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';

export interface ButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'type' | 'class' | 'className'> {
  /** Default "button": a submit button says so. */
  type?: 'button' | 'submit';
  variant?: 'primary' | 'secondary' | 'danger' | 'link';
  /** While an action runs: the button stays focusable and says it is busy, and further clicks are ignored. */
  busy?: boolean;
  children: ComponentChildren;
}

export function Button({ type = 'button', variant = 'secondary', busy = false, onClick, children, ...rest }: ButtonProps) {
  return (
    <button
      {...rest}
      type={type}
      class={`button button-${variant}`}
      aria-disabled={busy || undefined}
      onClick={(event) => {
        if (busy) {
          event.preventDefault();
          return;
        }
        onClick?.(event);
      }}
    >
      {children}
    </button>
  );
}

/** Text that screen readers read but that is not shown (e.g. which row a "Remove" button removes). */
export function Hidden({ children }: { children: ComponentChildren }) {
  return <span class="visually-hidden">{children}</span>;
}
