/**
 * Drafts: what a person typed into a form, kept in this browser's
 * localStorage until it is saved, so that neither a reload nor a failed
 * save loses it. One draft per form and record, under the person and the
 * workspace (another person signing in on this browser never sees it);
 * signing out removes them all. Secrets (passwords) are never kept: the
 * form leaves them out of what it stores.
 */
import { useCallback, useRef, useState } from 'preact/hooks';
import { account } from './api.ts';

const PREFIX = 'flipbook:draft:';

interface Stored<T> {
  /** What the form held. */
  value: T;
  /** What the form started from (a settings_revision, an updated_at): a draft of an older start is still offered, and saving it meets the API's own conflict check. */
  base?: string | undefined;
  savedAt: number;
}

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    // Storage refused (a privacy setting): the form works without drafts.
    return null;
  }
}

/** The key of a form's draft for the signed-in person and workspace, or null when nobody is signed in. */
export function draftKey(form: string, id: string): string | null {
  const me = account.value;
  if (!me) return null;
  return `${PREFIX}${me.user.id}:${me.active_workspace?.id ?? 'none'}:${form}:${id}`;
}

export function readDraft<T>(key: string | null): Stored<T> | null {
  if (!key) return null;
  const raw = storage()?.getItem(key);
  if (!raw) return null;
  try {
    return JSON.parse(raw) as Stored<T>;
  } catch {
    return null;
  }
}

export function writeDraft<T>(key: string | null, value: T, base?: string): void {
  if (!key) return;
  try {
    storage()?.setItem(key, JSON.stringify({ value, base, savedAt: Date.now() } satisfies Stored<T>));
  } catch {
    // Full or refused: the form still works; only the draft is not kept.
  }
}

export function clearDraft(key: string | null): void {
  if (key) storage()?.removeItem(key);
}

/** Removes every draft of this browser (at sign-out). */
export function clearAllDrafts(): void {
  const store = storage();
  if (!store) return;
  for (const key of Object.keys(store)) if (key.startsWith(PREFIX)) store.removeItem(key);
}

export interface Draft<T> {
  value: T;
  set: (next: T | ((current: T) => T)) => void;
  /** The form was filled from a draft kept from before (shown to the person, with a way to discard it). */
  restored: boolean;
  /** The draft's base when it was restored (to tell whether the record changed since). */
  restoredBase: string | undefined;
  /** After a save: forget the draft and start from `next`. */
  saved: (next: T) => void;
  /** Throws the draft away and goes back to `initial`. */
  discard: (initial: T) => void;
  /** Keeps the values but forgets the restored base (the person has seen the record as it is now). */
  rebase: () => void;
}

/**
 * A form's values that outlive a reload: starts from the kept draft when
 * there is one (else `initial`), keeps every change, and forgets it once
 * saved. `differs` tells whether a value is worth keeping (unchanged forms
 * leave no draft); `strip` removes what must not be stored (passwords).
 */
export function useDraft<T>(key: string | null, initial: () => T, options: { base?: string; strip?: (value: T) => T; differs?: (value: T) => boolean } = {}): Draft<T> {
  const [state, setState] = useState(() => {
    const kept = readDraft<T>(key);
    const start = initial();
    return kept ? { value: { ...start, ...kept.value }, restored: true, restoredBase: kept.base } : { value: start, restored: false, restoredBase: undefined as string | undefined };
  });
  const opts = useRef(options);
  opts.current = options;
  const current = useRef(state.value);

  // Kept at once, not after the next render: a reload right after a keystroke must not lose it.
  const set = useCallback((next: T | ((value: T) => T)) => {
    const value = typeof next === 'function' ? (next as (value: T) => T)(current.current) : next;
    current.current = value;
    const { strip, differs, base } = opts.current;
    if (differs && !differs(value)) clearDraft(key);
    else writeDraft(key, strip ? strip(value) : value, base);
    setState((s) => ({ ...s, value }));
  }, [key]);
  const saved = useCallback((next: T) => {
    current.current = next;
    clearDraft(key);
    setState({ value: next, restored: false, restoredBase: undefined });
  }, [key]);
  const rebase = useCallback(() => setState((s) => ({ ...s, restoredBase: undefined })), []);
  return { ...state, set, saved, discard: saved, rebase };
}
