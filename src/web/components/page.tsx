import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

let firstPage = true;

/**
 * A screen's title: its <h1> and the document's title. After a navigation
 * within the application, focus moves to the heading, so a screen reader
 * announces the new screen (the first page of a visit keeps the browser's
 * own start).
 */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Flipbook`;
    if (firstPage) firstPage = false;
    else heading.current?.focus();
  }, [title]);
  return (
    <>
      <h1 ref={heading} tabIndex={-1}>{title}</h1>
      {children}
    </>
  );
}
