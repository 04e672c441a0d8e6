/** Messages between the render pool (main thread) and its pdf.js workers. */
import type { ConversionErrorCode } from './conversion.errors.ts';
import type { DocumentInfo, ImageFormat, RenderedPage } from './conversion.types.ts';

/** Sent with 'open': a worker renders one document at a time, opened once. */
export interface RenderWorkerInit {
  filePath: string;
  password?: string;
  outDir: string;
  widths: number[];
  format: ImageFormat;
  quality: number;
  effort: number;
  maxPagePixels: number;
  /** Largest image inside a PDF that pdf.js will decode, in pixels (decompression-bomb guard). */
  maxEmbeddedImagePixels: number;
  /** Only one worker reads the outline and title. */
  wantDocumentInfo: boolean;
  /** Draw with pdf.js (and poppler for what it cannot draw) even where mutool is installed: renditions drawn on demand. */
  pdfjsOnly?: boolean;
  /** Pixels only: the pages' text and links are known already (a readable book's background phase), so pdf.js does not read them again. */
  pixelsOnly?: boolean;
}

export type ToRenderWorker =
  | { type: 'open'; init: RenderWorkerInit }
  /** `next`: the pages this renderer expects to be sent after this one, in order (mutool draws them in one run). */
  | { type: 'render'; page: number; next?: number[] }
  /** Finish what is in hand, close the document, answer 'closed': the worker is then free for another job. */
  | { type: 'close' };

export type FromRenderWorker =
  /** `runs`: pages are drawn by mutool, which wants to know the pages coming next (render's `next`). */
  | { type: 'opened'; pageCount: number; info: Omit<DocumentInfo, 'pageCount'> | null; runs: boolean }
  | { type: 'open-failed'; code: ConversionErrorCode; message: string }
  | { type: 'page'; page: RenderedPage }
  | { type: 'page-failed'; page: number; message: string; widthPt: number | null; heightPt: number | null }
  | { type: 'closed' };
