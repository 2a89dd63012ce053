/**
 * Body of a document-reading process (see pool.ts): reads one file at a time and sends back its text
 * or why it cannot. The bytes arrive over the IPC channel and are dropped when the job ends; nothing
 * is written anywhere. It ends with its parent (the channel closing).
 */
import { extractDocument } from './extract.ts';
import type { ExtractJob, ExtractReply } from './pool.ts';
import { DocumentError, type ExtractLimits } from './types.ts';

const send = process.send?.bind(process);
if (!send) throw new Error('the document reader must run as a child process with an IPC channel');
const limits = JSON.parse(process.env.TEXTDETECT_READER_LIMITS ?? '{}') as ExtractLimits;
process.on('disconnect', () => process.exit(0));

// pdf.js compiles a large module on first use (over a second on a busy machine): one tiny PDF read
// at start keeps that off the first caller's clock.
const WARM_UP_PDF = [
  '%PDF-1.4',
  '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
  '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj',
  '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >> endobj',
  '4 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj',
  '5 0 obj << /Length 40 >> stream',
  'BT /F1 12 Tf 20 100 Td (Warm up.) Tj ET',
  'endstream endobj',
  'trailer << /Root 1 0 R >>',
  '%%EOF',
].join('\n');
try {
  await extractDocument(new TextEncoder().encode(WARM_UP_PDF), limits);
} catch {
  // A failed warm-up only means the first real file pays the start-up cost.
}

process.on('message', async (job: ExtractJob) => {
  let reply: ExtractReply;
  try {
    reply = { id: job.id, document: await extractDocument(job.bytes, limits) };
  } catch (err) {
    reply =
      err instanceof DocumentError
        ? { id: job.id, error: { code: err.code, message: err.message, type: err.type, pages: err.pages, read: err.read } }
        : {
            id: job.id,
            error: { code: 'file_unreadable', message: 'The file could not be read: it is damaged or in an unexpected form.' },
          };
  }
  send(reply);
});
send({ ready: true });
