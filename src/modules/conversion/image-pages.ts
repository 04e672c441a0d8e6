/**
 * A JPEG or PNG upload → a one-page document.
 *
 * - The pixel limit is checked on the header before any decoding (sharp's
 *   limitInputPixels enforces it again while decoding, so a header that lies
 *   cannot slip a larger image through).
 * - EXIF orientation is applied: a phone photo stored sideways shows upright.
 * - Colour ends up sRGB: CMYK (including Adobe's inverted YCCK JPEGs) and
 *   embedded ICC profiles are converted by libvips, 16-bit is reduced to 8.
 * - Transparency is flattened onto white: a flipbook page is paper, and every
 *   other page (rendered PDFs) is opaque too.
 * - No upscaling: a requested width larger than the image gives the image at
 *   its own width (so a 200 px logo yields three 200 px files). Enlarging
 *   would only add bytes, not detail; the viewer scales up if it must.
 * - A damaged image (truncated, bad compressed data) is an error, not a page
 *   with a grey half: sharp's failOn 'warning' turns libjpeg/libpng warnings
 *   into failures.
 */
import { mkdir } from 'node:fs/promises';
import sharp, { type Metadata } from 'sharp';
import { ConversionError } from './conversion.errors.ts';
import type { RenderedPage } from './conversion.types.ts';
import { encodeWidths, type ImageOutputOptions } from './page-images.ts';

/** 30,000 x 30,000 would be 900 MP; 100 MP (e.g. 12,000 x 8,333) covers any real photo or scan. */
export const DEFAULT_MAX_IMAGE_PIXELS = 100_000_000;

export interface ImagePageOptions extends ImageOutputOptions {
  outDir: string;
  maxImagePixels?: number;
}

/** EXIF orientations 5-8 swap width and height. */
const SWAPS_SIDES = new Set([5, 6, 7, 8]);

export async function renderImagePage(filePath: string, options: ImagePageOptions): Promise<RenderedPage> {
  const limit = options.maxImagePixels ?? DEFAULT_MAX_IMAGE_PIXELS;
  let metadata: Metadata;
  try {
    metadata = await sharp(filePath, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw new ConversionError('invalid_document', 'This image is damaged and cannot be read.', { cause: error });
  }
  const { width: storedWidth, height: storedHeight } = metadata;
  if (!storedWidth || !storedHeight) throw new ConversionError('invalid_document', 'This image has no valid size in its header.');
  if (storedWidth * storedHeight > limit) {
    throw new ConversionError(
      'too_large',
      `This image is ${storedWidth} x ${storedHeight} pixels; images over ${Math.round(limit / 1_000_000)} megapixels are not accepted. Scale it down and upload it again.`,
    );
  }
  const swap = SWAPS_SIDES.has(metadata.orientation ?? 1);
  const width = swap ? storedHeight : storedWidth;
  const height = swap ? storedWidth : storedHeight;

  const input = sharp(filePath, { limitInputPixels: limit, failOn: 'warning' })
    .autoOrient()
    .flatten({ background: { r: 255, g: 255, b: 255 } })
    .toColourspace('srgb');
  await mkdir(options.outDir, { recursive: true });
  let images;
  try {
    images = await encodeWidths(input, { width, height }, { ...options, baseName: 'page-00001' });
  } catch (error) {
    throw new ConversionError('invalid_document', 'This image is damaged or incomplete and cannot be decoded.', { cause: error });
  }

  // Points at the image's own resolution when it states one (a 300 dpi scan of
  // A4 comes out A4), else one point per pixel.
  const density = metadata.density && metadata.density >= 10 && metadata.density <= 10_000 ? metadata.density : 72;
  const toPt = (px: number) => Math.round(((px * 72) / density) * 100) / 100;
  return { number: 1, widthPt: toPt(width), heightPt: toPt(height), images, text: [], links: [], sourcePixels: { width, height } };
}

/** One rendition of an uploaded image page, made on request (a zoomed reader): the same pipeline as the conversion's, at one width. */
export async function encodeImageRendition(filePath: string, width: number, height: number, target: { format: 'webp' | 'jpeg'; quality: number; effort: number }): Promise<Buffer> {
  const pipeline = sharp(filePath, { limitInputPixels: DEFAULT_MAX_IMAGE_PIXELS, failOn: 'warning' })
    .autoOrient()
    .flatten({ background: { r: 255, g: 255, b: 255 } })
    .toColourspace('srgb')
    .resize(width, height, { fit: 'fill' });
  return target.format === 'jpeg' ? pipeline.jpeg({ quality: target.quality, chromaSubsampling: '4:2:0' }).toBuffer() : pipeline.webp({ quality: target.quality, effort: target.effort, smartSubsample: false }).toBuffer();
}
