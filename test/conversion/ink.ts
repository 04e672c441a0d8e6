/**
 * Lost ink: the fidelity measure SSIM cannot give. A page missing a table
 * column still scores ~0.82 SSIM; counted here, it is a third of its inked
 * regions nearly empty. Both images are cut into the same grid of cells;
 * a cell is inked when the reference puts ink there (mean darkness over 1%),
 * and lost when ours carries under half the reference's ink in it. The
 * reference is poppler's pdftoppm at the same size.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';

export interface InkComparison {
  /** Cells where the reference has ink. */
  inked: number;
  /** Of those, cells where ours has under half the reference's ink. */
  lost: number;
  /** Our total ink over the reference's (1 = as much ink). */
  ratio: number;
}

async function darkness(image: Buffer | string, width: number, height: number): Promise<Uint8Array> {
  const { data } = await sharp(image).flatten({ background: '#ffffff' }).greyscale().resize(width, height, { fit: 'fill' }).raw().toBuffer({ resolveWithObject: true });
  return Uint8Array.from(data, (v) => 255 - v);
}

export async function compareInk(ours: Buffer | string, reference: Buffer | string, grid = 24): Promise<InkComparison> {
  const { width = 0, height = 0 } = await sharp(reference).metadata();
  const [a, b] = await Promise.all([darkness(ours, width, height), darkness(reference, width, height)]);
  let inked = 0;
  let lost = 0;
  let inkOurs = 0;
  let inkReference = 0;
  for (let gy = 0; gy < grid; gy++) {
    for (let gx = 0; gx < grid; gx++) {
      let sumA = 0;
      let sumB = 0;
      const [x0, x1] = [Math.floor((gx * width) / grid), Math.floor(((gx + 1) * width) / grid)];
      const [y0, y1] = [Math.floor((gy * height) / grid), Math.floor(((gy + 1) * height) / grid)];
      for (let y = y0; y < y1; y++) {
        for (let x = x0; x < x1; x++) {
          sumA += a[y * width + x]!;
          sumB += b[y * width + x]!;
        }
      }
      inkOurs += sumA;
      inkReference += sumB;
      const cells = Math.max(1, (x1 - x0) * (y1 - y0));
      if (sumB / cells / 255 > 0.01) {
        inked++;
        if (sumA < sumB * 0.5) lost++;
      }
    }
  }
  return { inked, lost, ratio: inkReference > 0 ? inkOurs / inkReference : 1 };
}

/** One page drawn by pdftoppm at exactly width x height (PNG bytes). */
export async function popplerReference(pdf: string, page: number, width: number, height: number): Promise<Buffer> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'flipbook-ink-'));
  try {
    await promisify(execFile)('pdftoppm', ['-f', String(page), '-l', String(page), '-scale-to-x', String(width), '-scale-to-y', String(height), '-png', '-singlefile', pdf, path.join(dir, 'ref')]);
    return await readFile(path.join(dir, 'ref.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
