/**
 * Page pixels → one file per requested width (WebP by default, JPEG optional).
 *
 * Measured on a 2048x2650 text page (tracemonkey p.1, 2 cores, CPU time):
 * WebP effort 0 ≈ 120 ms, effort 2 ≈ 220 ms, effort 4 ≈ 370 ms for sizes
 * within 1 %; JPEG ≈ 65 ms (30 % larger files). Effort 0 is the default and
 * `quality` sets the size/quality trade. Resizing RGBA in sharp costs ~50 ms
 * per width (premultiplied 4-band resample), so rendered PDF pages are
 * downscaled on the canvas instead (see pdf-render.worker.ts) and sharp only
 * encodes; uploaded images go through sharp's resize, which is cheap there
 * thanks to JPEG shrink-on-load.
 */
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import type { ImageFormat, PageImage } from './conversion.types.ts';

export const DEFAULT_WIDTHS: readonly number[] = [320, 1024, 2048];
/**
 * Widths of DEFAULT_WIDTHS a PDF conversion leaves out, made on first request
 * instead (books/page-renditions.service.ts). The 2048 px image was 60 % of a
 * page's conversion time (its render at 4x the pixels of 1024 px, and 120 of
 * the 180-210 ms of encoding) and is only fetched by high-density screens.
 */
export const DEFAULT_ON_DEMAND_WIDTHS: readonly number[] = [2048];
/** Renditions beyond the listed widths, for the reader's zoom (4x on a 3x phone screen is ~4,700 px), made on request. */
export const DEFAULT_ZOOM_WIDTHS: readonly number[] = [3072, 4096, 5120];
/** Pixel budget of a zoom rendition: a 5120 px wide A4 page (37 MP) fits. */
export const ZOOM_MAX_PAGE_PIXELS = 5120 * 5120 * 1.5;
export const DEFAULT_QUALITY = 80;
export const DEFAULT_EFFORT = 0;
/** WebP cannot store a side longer than 16383 px. */
export const MAX_SIDE = 16_383;
/** Pixel budget of the largest rendition of one page: 2048 px wide at an aspect ratio of up to 1:6. */
export const DEFAULT_MAX_PAGE_PIXELS = 2048 * 2048 * 6;

export interface ImageOutputOptions {
  widths: readonly number[];
  format: ImageFormat;
  quality: number;
  /** WebP only: 0 (fastest) .. 6. */
  effort: number;
}

export interface EncodeTarget extends ImageOutputOptions {
  outDir: string;
  /** File name stem, e.g. "page-0001"; the width and extension are appended. */
  baseName: string;
}

/** Validated, de-duplicated widths, in the caller's order (images come back index-aligned with them). */
export function normaliseWidths(widths: readonly number[] | undefined): number[] {
  const list = widths && widths.length > 0 ? widths : DEFAULT_WIDTHS;
  for (const width of list) {
    if (!Number.isInteger(width) || width < 16 || width > MAX_SIDE) {
      throw new RangeError(`Image widths must be whole numbers from 16 to ${MAX_SIDE}; got ${width}.`);
    }
  }
  return [...new Set(list)];
}

/**
 * The size to render a page of `widthPt` x `heightPt` at, so that its width is
 * `targetWidth` unless that breaks the pixel budget or the maximum side
 * (absurd page sizes or aspect ratios are scaled down, never refused).
 */
export function fitRenderSize(widthPt: number, heightPt: number, targetWidth: number, maxPixels: number): { scale: number; width: number; height: number } {
  const w = Math.max(widthPt, 1e-3);
  const h = Math.max(heightPt, 1e-3);
  const scale = Math.min(targetWidth / w, Math.sqrt(maxPixels / (w * h)), MAX_SIDE / w, MAX_SIDE / h);
  return { scale, width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
}

/** The size of a PDF page's rendition at `requestedWidth`, as the renderer makes it (fitRenderSize, then outputSize). */
export function renditionSize(widthPt: number, heightPt: number, requestedWidth: number, maxPixels: number): { width: number; height: number } {
  return outputSize(fitRenderSize(widthPt, heightPt, requestedWidth, maxPixels), requestedWidth);
}

/** Width and height of the output for one requested width: never wider than the source (no upscaling). */
export function outputSize(source: { width: number; height: number }, requestedWidth: number): { width: number; height: number } {
  const width = Math.min(requestedWidth, source.width);
  return { width, height: Math.max(1, Math.round((source.height * width) / source.width)) };
}

function encoder(pipeline: Sharp, options: ImageOutputOptions): Sharp {
  return options.format === 'jpeg'
    ? pipeline.jpeg({ quality: options.quality, chromaSubsampling: '4:2:0' })
    : pipeline.webp({ quality: options.quality, effort: options.effort, smartSubsample: false });
}

/**
 * Writes one file per requested width from `input`, an opaque sRGB pipeline of
 * `source` size. Smaller widths are downscaled from the source: much cheaper
 * than re-rendering (about 15 ms for 2048→1024).
 */
export async function encodeWidths(input: Sharp, source: { width: number; height: number }, target: EncodeTarget): Promise<PageImage[]> {
  const extension = target.format === 'jpeg' ? 'jpg' : 'webp';
  return Promise.all(
    target.widths.map(async (requestedWidth) => {
      const size = outputSize(source, requestedWidth);
      let pipeline = input.clone();
      if (size.width !== source.width || size.height !== source.height) {
        pipeline = pipeline.resize(size.width, size.height, { fit: 'fill' });
      }
      const file = path.join(target.outDir, `${target.baseName}-${requestedWidth}.${extension}`);
      const info = await encoder(pipeline, target).toFile(file);
      return { requestedWidth, width: info.width, height: info.height, format: target.format, path: file, bytes: info.size };
    }),
  );
}

/**
 * Writes one file per rendition from `input`, an opaque pipeline of `source`
 * size, each resized (Lanczos) to its own exact size when it differs.
 */
export async function encodeSized(input: Sharp, source: { width: number; height: number }, renditions: readonly { requestedWidth: number; width: number; height: number }[], target: EncodeTarget): Promise<PageImage[]> {
  const extension = target.format === 'jpeg' ? 'jpg' : 'webp';
  return Promise.all(
    renditions.map(async ({ requestedWidth, width, height }) => {
      let pipeline = input.clone();
      if (width !== source.width || height !== source.height) pipeline = pipeline.resize(width, height, { fit: 'fill' });
      const file = path.join(target.outDir, `${target.baseName}-${requestedWidth}.${extension}`);
      const info = await encoder(pipeline, target).toFile(file);
      return { requestedWidth, width: info.width, height: info.height, format: target.format, path: file, bytes: info.size };
    }),
  );
}

export interface RawRendition {
  requestedWidth: number;
  /** Opaque RGBA pixels (premultiplied equals straight when alpha is 255 everywhere). */
  data: Buffer;
  width: number;
  height: number;
}

/** Encodes ready-sized RGBA buffers, in parallel on libvips threads. */
export async function encodeRaw(renditions: readonly RawRendition[], target: EncodeTarget): Promise<PageImage[]> {
  const extension = target.format === 'jpeg' ? 'jpg' : 'webp';
  return Promise.all(
    renditions.map(async ({ requestedWidth, data, width, height }) => {
      const file = path.join(target.outDir, `${target.baseName}-${requestedWidth}.${extension}`);
      const info = await encoder(sharp(data, { raw: { width, height, channels: 4 } }), target).toFile(file);
      return { requestedWidth, width: info.width, height: info.height, format: target.format, path: file, bytes: info.size };
    }),
  );
}

/** A blank white page, used in place of a page that failed to render so numbering stays intact. */
export async function encodeBlankPage(size: { width: number; height: number }, target: EncodeTarget): Promise<PageImage[]> {
  const input = sharp({ create: { width: size.width, height: size.height, channels: 3, background: { r: 255, g: 255, b: 255 } } });
  return encodeWidths(input, size, target);
}
