import type { ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';

interface TableProps {
  /** The table's caption, also the name of its scrolling region. */
  caption: string;
  /** Show the caption only to screen readers (a heading above already says it). */
  hideCaption?: boolean;
  head: ComponentChildren;
  children: ComponentChildren;
}

/**
 * A data table in a region that scrolls sideways on narrow screens; the
 * region can be reached with the keyboard when (and only when) it scrolls.
 */
export function Table({ caption, hideCaption = false, head, children }: TableProps) {
  const id = useId();
  const wrap = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = wrap.current!;
    const measure = () => setScrolls(element.scrollWidth > element.clientWidth + 1);
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    measure();
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={wrap} class="table-wrap" role="region" aria-labelledby={id} tabIndex={scrolls ? 0 : undefined}>
      <table>
        <caption id={id} class={hideCaption ? 'visually-hidden' : undefined}>{caption}</caption>
        <thead>{head}</thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
