import type { ComponentChildren } from 'preact';
import { Field } from './field.tsx';

export interface Option {
  value: string;
  label: string;
}

interface SelectProps {
  /** A visible label above the select. */
  label: string;
  value: string;
  options: readonly Option[];
  onValue: (value: string) => void;
  hint?: ComponentChildren;
  errors?: string[] | undefined;
  name?: string;
}

export function Select({ label, value, options, onValue, hint, errors, name }: SelectProps) {
  return (
    <Field label={label} hint={hint} errors={errors}>
      {(control) => <BareSelect {...control} name={name} value={value} options={options} onValue={onValue} />}
    </Field>
  );
}

interface BareSelectProps {
  id?: string;
  name?: string | undefined;
  value: string;
  options: readonly Option[];
  onValue: (value: string) => void;
  /** Ids of visible text that names the select (in a table: the column's header and the row's name). */
  'aria-labelledby'?: string;
  'aria-describedby'?: string | undefined;
  'aria-invalid'?: true;
}

/** A select whose visible label is elsewhere (a table's header): name it with aria-labelledby. */
export function BareSelect({ value, options, onValue, ...rest }: BareSelectProps) {
  return (
    <select {...rest} value={value} onChange={(event) => onValue(event.currentTarget.value)}>
      {options.map((option) => (
        <option key={option.value} value={option.value}>{option.label}</option>
      ))}
    </select>
  );
}
