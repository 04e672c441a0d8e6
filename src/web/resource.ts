import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Problem, Result } from './api.ts';

export interface Resource<T> {
  /** The last data read (kept while reloading, so a list does not blink). */
  data: T | undefined;
  problem: Problem | null;
  loading: boolean;
  reload: () => Promise<void>;
}

/** Reads something from the API when the screen opens, and again on reload(). */
export function useResource<T>(load: () => Promise<Result<T>>): Resource<T> {
  const [state, setState] = useState<{ data: T | undefined; problem: Problem | null; loading: boolean }>({ data: undefined, problem: null, loading: true });
  const latest = useRef(load);
  latest.current = load;
  const mounted = useRef(true);
  const reload = useCallback(async () => {
    setState((s) => ({ ...s, loading: true }));
    const result = await latest.current();
    if (!mounted.current) return;
    setState((s) => (result.ok ? { data: result.data, problem: null, loading: false } : { data: s.data, problem: result.problem, loading: false }));
  }, []);
  useEffect(() => {
    mounted.current = true;
    void reload();
    return () => {
      mounted.current = false;
    };
  }, [reload]);
  return { ...state, reload };
}
