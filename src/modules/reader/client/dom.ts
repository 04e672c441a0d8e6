/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/** Small DOM helpers for the reader's browser code. */

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, className = '', attributes: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  for (const name of Object.keys(attributes)) el.setAttribute(name, attributes[name]!);
  return el;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}

export function reducedMotion(): boolean {
  return matchMedia('(prefers-reduced-motion: reduce)').matches;
}

/** Fits a box of aspect ratio `ratio` (width / height) inside width x height. */
export function fit(width: number, height: number, ratio: number): { width: number; height: number } {
  return width / height > ratio ? { width: height * ratio, height } : { width, height: width / ratio };
}

export function px(value: number): string {
  return `${Math.round(value * 100) / 100}px`;
}
