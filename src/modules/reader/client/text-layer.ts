/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/** The page's selectable text layer (filled in by a later change). */
import type { ReaderData } from '../reader.types.ts';

export class TextLayer {
  constructor(_data: ReaderData) {}
  size(_el: HTMLElement, _width: number, _height: number): void {}
  attach(_el: HTMLElement, _n: number, _width: number): void {}
}
