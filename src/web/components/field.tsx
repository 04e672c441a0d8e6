import type { ComponentChildren, PartialInputHTMLAttributes } from 'preact';
import { useId } from 'preact/hooks';

interface FieldProps {
  label: string;
  /** A sentence under the label (format, what happens). */
  hint?: ComponentChildren;
  /** The API's messages for this field (`error.details[field]`). */
  errors?: string[] | undefined;
  children: (control: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: true }) => ComponentChildren;
}

/** A visible label, an optional hint, the control and its errors, tied together for assistive technology. */
export function Field({ label, hint, errors, children }: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : null;
  const errorId = errors?.length ? `${id}-error` : null;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div class={`field${errors?.length ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {hint && <p class="hint" id={hintId!}>{hint}</p>}
      {children({ id, 'aria-describedby': describedBy, ...(errors?.length ? { 'aria-invalid': true as const } : {}) })}
      {errorId && (
        <ul class="field-errors" id={errorId}>
          {errors!.map((message) => <li key={message}>{message}</li>)}
        </ul>
      )}
    </div>
  );
}

export interface TextInputProps extends Omit<PartialInputHTMLAttributes<HTMLInputElement>, 'value' | 'onInput' | 'id' | 'label' | 'role' | 'type'> {
  type?: 'text' | 'email' | 'password' | 'date';
  label: string;
  hint?: ComponentChildren;
  errors?: string[] | undefined;
  value: string;
  onValue: (value: string) => void;
}

export function TextInput({ label, hint, errors, value, onValue, type = 'text', ...rest }: TextInputProps) {
  return (
    <Field label={label} hint={hint} errors={errors}>
      {(control) => <input {...rest} {...control} type={type as 'text'} value={value} onInput={(event) => onValue(event.currentTarget.value)} />}
    </Field>
  );
}
