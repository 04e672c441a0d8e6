import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import type { RenderedPage } from '../../src/modules/conversion/conversion.service.ts';
import { CORPUS_SKIP, convert, corpus, failure, withWorkDir, writeTemp } from './conversion-documents.ts';

async function convertImage(name: string, bytes: Uint8Array, options: Parameters<typeof convert>[1] = {}, inspect?: (page: RenderedPage) => Promise<void>) {
  return withWorkDir(async (dir) => convert(await writeTemp(dir, name, bytes), options, inspect ? (page) => inspect(page) : undefined));
}

/** RGB of the output pixel at fractions (fx, fy) of the image. */
async function pixel(file: string, fx: number, fy: number): Promise<[number, number, number]> {
  const { data, info } = await sharp(file).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const offset = (Math.floor(fy * (info.height - 1)) * info.width + Math.floor(fx * (info.width - 1))) * 3;
  return [data[offset]!, data[offset + 1]!, data[offset + 2]!];
}


/** A PNG claiming the given size, with almost no image data: decoding it would allocate the claimed size. */
function pngHeaderOnly(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', Buffer.from([0x78, 0x9c, 0x03, 0x00])), chunk('IEND', Buffer.alloc(0))]);
}

describe('image → one-page document (generated images)', () => {
  it('applies EXIF orientation and never upscales', async () => {
    // Stored 600x400 with orientation 6 (rotate 90° clockwise): displays 400x600.
    const jpeg = await sharp({ create: { width: 600, height: 400, channels: 3, background: '#3366cc' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const { result, pages } = await convertImage('photo.jpg', jpeg);
    assert.equal(result.pageCount, 1);
    assert.equal(result.sourceFormat, 'jpeg');
    const page = pages[0]!;
    assert.deepEqual(page.images.map((i) => [i.requestedWidth, i.width, i.height]), [[320, 320, 480], [1024, 400, 600], [2048, 400, 600]]);
    assert.deepEqual([page.widthPt, page.heightPt], [400, 600]);
    assert.deepEqual(page.text, []);
    assert.deepEqual(page.links, []);
  });

  it('converts CMYK to sRGB with the right colours', async () => {
    const cmyk = await sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 220, g: 20, b: 20 } } }).toColourspace('cmyk').jpeg().toBuffer();
    assert.equal((await sharp(cmyk).metadata()).space, 'cmyk');
    await convertImage('cmyk.jpg', cmyk, { widths: [64] }, async (page) => {
      const [r, g, b] = await pixel(page.images[0]!.path, 0.5, 0.5);
      assert.ok(r > 170 && g < 80 && b < 80, `expected red, got ${r},${g},${b}`);
    });
  });

  it('flattens transparency onto white and reads 16-bit and interlaced PNGs', async () => {
    const transparent = await sharp({ create: { width: 40, height: 40, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    await convertImage('t.png', transparent, { widths: [40] }, async (page) => {
      assert.deepEqual(await pixel(page.images[0]!.path, 0.5, 0.5), [255, 255, 255]);
    });
    const sixteen = await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 0, g: 128, b: 255 } } }).toColourspace('rgb16').png().toBuffer();
    assert.equal((await sharp(sixteen).metadata()).depth, 'ushort');
    await convertImage('16.png', sixteen, { widths: [32] }, async (page) => {
      const [r, g, b] = await pixel(page.images[0]!.path, 0.5, 0.5);
      assert.ok(r < 30 && Math.abs(g - 128) < 25 && b > 225, `${r},${g},${b}`);
    });
    const interlaced = await sharp({ create: { width: 50, height: 30, channels: 3, background: 'green' } }).png({ progressive: true }).toBuffer();
    assert.equal((await sharp(interlaced).metadata()).isProgressive, true);
    const { pages } = await convertImage('i.png', interlaced, { widths: [100] });
    assert.deepEqual([pages[0]!.images[0]!.width, pages[0]!.images[0]!.height], [50, 30]);
  });

  it('refuses a corrupt image and one over the pixel limit (before decoding)', async () => {
    const jpeg = await sharp({ create: { width: 300, height: 300, channels: 3, background: 'orange' } }).jpeg().toBuffer();
    const truncated = await failure(convertImage('cut.jpg', jpeg.subarray(0, Math.floor(jpeg.length * 0.6))));
    assert.equal(truncated.code, 'invalid_document');
    assert.match(truncated.message, /damaged/);

    const huge = await failure(convertImage('huge.png', pngHeaderOnly(30_000, 30_000)));
    assert.equal(huge.code, 'too_large');
    assert.match(huge.message, /30000 x 30000 pixels/);

    const limited = await failure(convertImage('big.jpg', jpeg, { maxImagePixels: 10_000 }));
    assert.equal(limited.code, 'too_large');
  });
});

describe('image → one-page document (real-world fixtures)', { skip: CORPUS_SKIP }, () => {
  it('Landscape_6.jpg displays 1800x1200', async () => {
    const { pages } = await convert(corpus('Landscape_6.jpg'));
    assert.deepEqual(pages[0]!.images.map((i) => [i.width, i.height]), [[320, 213], [1024, 683], [1800, 1200]]);
  });

  it('pil_sample_cmyk.jpg (Adobe YCCK): red top-left corner, black bottom-right', async () => {
    await convert(corpus('pil_sample_cmyk.jpg'), { widths: [100] }, async (page) => {
      const [r, g, b] = await pixel(page.images[0]!.path, 0.01, 0.01);
      assert.ok(r > 170 && g < 80 && b < 80, `top-left should be red, got ${r},${g},${b}`);
      const dark = await pixel(page.images[0]!.path, 0.99, 0.99);
      assert.ok(dark.every((c) => c < 60), `bottom-right should be black, got ${dark.join(',')}`);
    });
  });

  it('16-bit, interlaced RGBA and transparent PNGs and an ICC-profile JPEG convert', async () => {
    for (const [name, size] of [['basn2c16.png', [32, 32]], ['pil123rgba.png', [162, 150]], ['transparent.png', [200, 150]], ['icc_profile_big.jpg', [425, 250]]] as const) {
      const { pages } = await convert(corpus(name), { widths: [2048] });
      assert.deepEqual([pages[0]!.images[0]!.width, pages[0]!.images[0]!.height], size, name);
    }
  });

  it('truncated_jpeg.jpg and broken_data_stream.png fail cleanly', async () => {
    for (const name of ['truncated_jpeg.jpg', 'broken_data_stream.png']) {
      assert.equal((await failure(convert(corpus(name)))).code, 'invalid_document', name);
    }
  });
});
