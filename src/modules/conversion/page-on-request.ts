/**
 * A page a reader reached before the background phase drew it: drawn by one
 * `mutool draw` process straight from the PDF, at the sizes the conversion
 * listed for it, and encoded by sharp. No pdf.js at all: the page's size,
 * text and links are already known (the readable phase read them), and
 * opening the document in pdf.js cost more than the drawing (a 117-page
 * book: ~0.5 s against ~30 ms). The output is the background phase's own
 * (the same renderer at the same width, the same encoder), so whichever draws
 * the page first, the reader sees the same image.
 *
 * Null when mutool is not installed, the document is encrypted (mutool would
 * need the password on its command line) or mutool cannot draw the page at
 * the listed size: the caller then draws it with the pooled renderers.
 */
import sharp from 'sharp';
import type { ConversionWarning, PageImage } from './conversion.types.ts';
import { damagedImageMessage, mutoolAvailable, MutoolDrawer } from './mupdf-drawer.ts';
import { MAX_SIDE, encodeSized, type ImageOutputOptions } from './page-images.ts';

export interface PageOnRequest {
  /** The PDF, on local disk. */
  filePath: string;
  /** The job's private directory for mutool's and sharp's files. */
  outDir: string;
  page: number;
  /** The listed renditions: requested width and the exact size the conversion gave the page at that width. */
  renditions: readonly { requestedWidth: number; width: number; height: number }[];
  maxPagePixels: number;
  output: Omit<ImageOutputOptions, 'widths'>;
}

export async function drawPageOnRequest(request: PageOnRequest): Promise<{ images: PageImage[]; warnings: ConversionWarning[] } | null> {
  if (request.renditions.length === 0 || !(await mutoolAvailable())) return null;
  const widest = request.renditions.reduce((a, b) => (b.width > a.width ? b : a));
  const maxHeight = Math.max(1, Math.floor(Math.min(MAX_SIDE, request.maxPagePixels / widest.requestedWidth)));
  const drawer = new MutoolDrawer({ source: request.filePath, dir: request.outDir, width: widest.requestedWidth, maxHeight });
  try {
    const drawn = await drawer.draw(request.page);
    // mutool rounds the page's box to pixels on its own: a pixel off is resized, more means the pixel budget shrank it (pdf.js draws it).
    if (!drawn || Math.abs(drawn.width - widest.width) > 2 || Math.abs(drawn.height - widest.height) > 2) return null;
    const input = sharp(drawn.data, { raw: { width: drawn.width, height: drawn.height, channels: drawn.channels } }).toColourspace('srgb');
    const images = await encodeSized(input, drawn, request.renditions, { ...request.output, widths: request.renditions.map((r) => r.requestedWidth), outDir: request.outDir, baseName: `page-${request.page}` });
    const warnings: ConversionWarning[] = damagedImageMessage(drawn.messages)
      ? [{ code: 'image_damaged', message: `An image on page ${request.page} is damaged and could not be drawn; the rest of the page is shown. Check the image in the original document and upload it again.` }]
      : [];
    return { images, warnings };
  } finally {
    await drawer.close();
  }
}
