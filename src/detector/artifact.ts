/**
 * The model artifact: one gzip-compressed binary file.
 *
 *   "TDM1" | uint32 LE header length | header JSON (UTF-8) | zero padding to 8 | typed arrays
 *
 * The header holds everything small (version id, vocabulary, dense-feature scaling, per-mode
 * calibration) and the byte offset/length of each typed array (LM tables, weights). Binary arrays
 * keep the file a few MB and make loading a copy rather than a parse.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';

const MAGIC = 'TDM1';

/** Calibration and thresholds of one `language:mode` group. */
export interface GroupCalibration {
  /** Platt scaling p = 1 / (1 + exp(−(a·logit + b))). */
  a: number;
  b: number;
  /** `likely_ai` when p ≥ this: the 1%-FPR threshold fitted on held-out human texts. */
  aiThreshold: number;
  /**
   * Length-dependent `likely_ai` thresholds (1% FPR and the source guard within each length band),
   * ascending by `minWords`; the last band with `minWords` ≤ the text's word count applies. Short
   * texts are where plain human writing (formulaic answers) looks most AI-like, so they get their own.
   */
  aiThresholdByLength?: Array<{ minWords: number; threshold: number; nHuman: number }>;
  /**
   * Platt scaling for short texts (fitted on the short held-out texts of the whole language):
   * a text with `minWords` ≤ words < `maxWords` uses this instead of `a`, `b`, so a 20-word
   * tweet gets the probability that 20-word texts earn, not the one 300-word texts do.
   */
  plattByLength?: Array<{ minWords: number; maxWords: number; a: number; b: number; nHuman: number; nAi: number }>;
  /** `likely_human` when p < this. */
  humanThreshold: number;
  /**
   * Length-dependent `likely_human` thresholds, ascending by `minWords` (the last band with
   * `minWords` ≤ the text's word count applies): each the highest probability under which at most
   * the bounded share of every source's instruction-tuned AI texts of that length fall, capped at
   * `humanThreshold` (issue 31: a `likely_human` that means it). Absent in earlier artifacts.
   */
  humanThresholdByLength?: Array<{ minWords: number; threshold: number; nAi: number }>;
  /** Human and AI texts the calibration was fitted on. */
  nHuman: number;
  nAi: number;
}

/** Where the assistant head's margin starts to count, for texts of `minWords` words or more. */
export interface AssistantBar {
  minWords: number;
  /** From this margin the text is not `likely_human`. */
  veto: number;
  /** From this margin the text is `likely_ai`; absent where the head only vetoes (a language with too few of the family's texts to set it). */
  fire?: number;
  /**
   * From this margin a passage of this band, read on its own inside a text the head vetoes but does
   * not make `likely_ai`, is shown as generated (`segments.ts`, `assistantSpans`); absent: no passage is.
   */
  passage?: number;
  /**
   * Where `fire` (or `rise`) is set: the probability a vetoed text rises towards as its margin nears
   * it (`liftedProbability`), under the point where 2% of every older training file's people sit;
   * absent: a vetoed text is raised to the `likely_human` threshold and no further.
   */
  ceiling?: number;
  /**
   * A band under the evidence floor, whose texts get no verdict either way: the head only ranks
   * them, from `veto` rising towards `ceiling` as the margin nears this (set as `fire` is), and
   * never makes one likely AI. Such a band has no `fire` and no `passage`.
   */
  rise?: number;
}

export interface ArtifactHeader {
  format: 'textdetect-model';
  formatVersion: 1;
  /** Content-derived version id (`td1-<hash>`), reported in every result. */
  version: string;
  hashBits: number;
  vocab: string[];
  dense: { names: string[]; mean: number[]; std: number[] };
  bias: number;
  /**
   * Gradient-boosted trees over [dense features…, linear logit]; absent in linear-only models.
   * `linearWeight` (0 when absent): the raw score is (1 − w) · trees' margin + w · linear logit.
   */
  forest?: { depth: number; nTrees: number; nFeatures: number; base: number; linearWeight?: number };
  /** Keyed `language:mode`; `language:*` is the fallback for modes without data. */
  calibration: Record<string, GroupCalibration>;
  /**
   * Out-of-domain check per language: mean squared z-score (clipped at ±`clip`) of the listed dense
   * features against the training texts of that language; above `threshold` (a high percentile of
   * the training texts' own values) or over `maxWords` words, the text is out of domain.
   */
  ood?: Record<string, { features: number[]; mean: number[]; std: number[]; clip: number; threshold: number; maxWords: number }>;
  /**
   * The polished-vs-generated head (issue 31): a logistic model over the standardised dense
   * features (the detector's `dense.mean` / `dense.std`) and the hashed sparse features (arrays
   * `polish.dense`, `polish.sparse`), calibrated so that at 0.5 the training's `--polish-recall` of polished texts read as polished; the
   * headline calls a text polished from POLISHED_THRESHOLD (contract.ts), above that point. Absent in earlier artifacts.
   * `extra`: the head's own signals it also reads (`POLISH_EXTRA_NAMES` of polish.ts, by name), their
   * standardisation and weights; `forest`: trees over [dense features, those signals] (arrays
   * `polish.gb.*`), their margin blended with the linear logit. Both absent in the first head.
   */
  polish?: {
    bias: number;
    a: number;
    b: number;
    extra?: { names: string[]; mean: number[]; std: number[]; weights: number[] };
    forest?: { depth: number; nTrees: number; nFeatures: number; base: number; linearWeight: number };
  };
  /**
   * The assistant head (issue 38, `assistant.ts`): a logistic model over the dense features, the raw
   * score and the hashed features, with trees stacked on it (arrays `assistant.*`), trained on one
   * assistant family against human texts, and per language the
   * margins from which a text is not cleared (`veto`) and is likely AI (`fire`). Absent in earlier artifacts.
   */
  assistant?: {
    /** The linear part's bias and the raw score's divisor (its weights are the arrays `assistant.dense`, `assistant.sparse`). */
    bias: number;
    rawScale: number;
    /** The trees' margin is blended with the linear logit: (1 − w) · trees + w · logit. */
    linearWeight: number;
    forest?: { depth: number; nTrees: number; nFeatures: number; base: number };
    bars: Record<string, AssistantBar[]>;
    /** The family it was trained on and how (for people reading the file). */
    trainedOn: Record<string, unknown>;
  };
  /** Part-of-speech tagger: tag names (id 0 is the text start), word endings → tag id, the unknown-word tag. */
  pos?: { tags: string[]; suffix: Array<[string, number]>; defaultTag: number };
  /** Free-form training facts (data sizes, options, dev metrics) for humans reading the file. */
  training: Record<string, unknown>;
  arrays: Record<string, { dtype: 'f32' | 'u32'; offset: number; length: number }>;
}

export type ArtifactArrays = Record<string, Float32Array | Uint32Array>;

export function writeArtifact(path: string, header: Omit<ArtifactHeader, 'arrays'>, arrays: ArtifactArrays): void {
  const layout: ArtifactHeader['arrays'] = {};
  let offset = 0;
  const parts: Buffer[] = [];
  for (const [name, arr] of Object.entries(arrays)) {
    const dtype = arr instanceof Float32Array ? 'f32' : 'u32';
    layout[name] = { dtype, offset, length: arr.length };
    const buf = Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
    parts.push(buf);
    offset += buf.length;
    const pad = (8 - (offset % 8)) % 8;
    if (pad) {
      parts.push(Buffer.alloc(pad));
      offset += pad;
    }
  }
  const json = Buffer.from(JSON.stringify({ ...header, arrays: layout }), 'utf8');
  const head = Buffer.alloc(8);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(json.length, 4);
  const headPad = Buffer.alloc((8 - ((8 + json.length) % 8)) % 8);
  const raw = Buffer.concat([head, json, headPad, ...parts]);
  // Write then rename, so a service loading the model never sees a half-written file.
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, gzipSync(raw, { level: 9 }));
  renameSync(tmp, path);
}

export function readArtifact(path: string): { header: ArtifactHeader; arrays: ArtifactArrays } {
  let raw: Buffer;
  try {
    raw = gunzipSync(readFileSync(path));
  } catch (err) {
    throw new Error(`Cannot read the model artifact at ${path}: ${(err as Error).message}`);
  }
  if (raw.toString('latin1', 0, 4) !== MAGIC) throw new Error(`${path} is not a textdetect model artifact.`);
  const len = raw.readUInt32LE(4);
  const header = JSON.parse(raw.toString('utf8', 8, 8 + len)) as ArtifactHeader;
  if (header.format !== 'textdetect-model' || header.formatVersion !== 1) {
    throw new Error(`${path} has an unsupported artifact format (${String(header.format)} v${String(header.formatVersion)}).`);
  }
  const base = 8 + len + ((8 - ((8 + len) % 8)) % 8);
  // Copy into an aligned buffer: typed-array views need 4-byte alignment.
  const body = new ArrayBuffer(raw.length - base);
  new Uint8Array(body).set(raw.subarray(base));
  const arrays: ArtifactArrays = {};
  for (const [name, { dtype, offset, length }] of Object.entries(header.arrays)) {
    arrays[name] = dtype === 'f32' ? new Float32Array(body, offset, length) : new Uint32Array(body, offset, length);
  }
  return { header, arrays };
}
