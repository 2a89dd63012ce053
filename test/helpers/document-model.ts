/**
 * The shipped detector without its assistant head (src/detector/assistant.ts): the document model,
 * the author model and the sentence model as they are. For tests of rules that read the document
 * model's scores (headlines, spans, the polish head, thresholds) with texts written for the tests:
 * those texts were written by an AI assistant, which the head reads as what they are.
 */
import { readFileSync } from 'node:fs';
import { readArtifact } from '../../src/detector/artifact.ts';
import { withoutAssistantHead } from '../../src/detector/assistant.ts';
import { readAuthorModel } from '../../src/detector/author.ts';
import { TextDetector } from '../../src/detector/engine.ts';
import { DEFAULT_AUTHOR_MODEL_PATH, DEFAULT_MODEL_PATH, DEFAULT_SEGMENT_MODEL_PATH } from '../../src/detector/index.ts';
import { LoadedModel } from '../../src/detector/model.ts';
import { parseSegmentModel } from '../../src/detector/segments.ts';

export function documentModelArtifact(): ReturnType<typeof readArtifact> {
  const { header, arrays } = readArtifact(DEFAULT_MODEL_PATH);
  return withoutAssistantHead(header, arrays);
}

export function documentModelDetector(): TextDetector {
  const { header, arrays } = documentModelArtifact();
  return new TextDetector(
    new LoadedModel(header, arrays),
    readAuthorModel(DEFAULT_AUTHOR_MODEL_PATH),
    parseSegmentModel(readFileSync(DEFAULT_SEGMENT_MODEL_PATH, 'utf8'), DEFAULT_SEGMENT_MODEL_PATH),
  );
}
