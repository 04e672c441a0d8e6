/**
 * Office fidelity and fonts (issue 15, defect 7): with the metric-compatible
 * free fonts installed (.ci/run: Carlito, Caladea, Liberation), a Word
 * document in Calibri and Cambria keeps its page count; a font the server
 * lacks is named in a warning. On a machine with DejaVu alone the same
 * document takes 14 pages instead of 13 and warns about Calibri and Cambria.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findSoffice } from '../../src/modules/conversion/conversion.service.ts';
import { convert, withWorkDir, writeTemp } from './conversion-documents.ts';
import { declaredPages, makeWordDocument } from './office-docx.ts';

const NO_OFFICE = (await findSoffice()) ? false : 'LibreOffice is not installed';

describe('office documents and their fonts', { skip: NO_OFFICE }, () => {
  it('keeps a Calibri and Cambria Word document within 5 % of its declared page count, without a warning', async () => {
    // 13 pages: the count with Calibri and Cambria metrics (Carlito and Caladea here).
    const docx = makeWordDocument({ chapters: 12, declaredPages: 13 });
    const { result } = await withWorkDir(async (dir) => convert(await writeTemp(dir, 'report.docx', docx), { widths: [320] }));
    const declared = await declaredPages(docx);
    assert.ok(Math.abs(result.pageCount - declared) <= declared * 0.05, `${result.pageCount} pages, ${declared} declared`);
    assert.deepEqual(result.warnings, []);
  });

  it('warns, naming the font, when the document asks for one the server lacks', async () => {
    const docx = makeWordDocument({ chapters: 2, declaredPages: 3, extraFont: 'Frobnicate Sans' });
    const { result } = await withWorkDir(async (dir) => convert(await writeTemp(dir, 'branded.docx', docx), { widths: [320] }));
    assert.equal(result.warnings.length, 1);
    assert.equal(result.warnings[0]!.code, 'fonts_substituted');
    assert.match(result.warnings[0]!.message, /\(Frobnicate Sans\)/);
    assert.match(result.warnings[0]!.message, /embed the fonts|as a PDF/);
  });
});
