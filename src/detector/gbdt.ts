/**
 * Small gradient-boosted trees (binary log-loss, second-order, fixed-depth "oblivious-free"
 * complete trees) over the dense features plus the linear model's logit.
 *
 * Why trees on top of the linear model: several LM features change sign between sources (plain
 * student essays are *more* predictable than AI text under an n-gram LM, news is less), which a
 * single linear weight cannot express; shallow trees can condition on the other features.
 *
 * A tree of depth D is stored as complete arrays: 2^D − 1 internal nodes (feature, threshold;
 * feature −1 = "no split, go left") and 2^D leaf values. Evaluation is D comparisons per tree.
 */

export interface Forest {
  depth: number;
  nFeatures: number;
  /** Per tree, per internal node: feature index (−1 = no split). */
  feature: Int32Array;
  /** Per tree, per internal node: go left when x[feature] ≤ threshold. */
  threshold: Float32Array;
  /** Per tree, per leaf: additive margin. */
  leaf: Float32Array;
  nTrees: number;
  /** Initial margin (log-odds of the weighted base rate). */
  base: number;
}

export function forestMargin(f: Forest, x: ArrayLike<number>): number {
  const internal = (1 << f.depth) - 1;
  const leaves = 1 << f.depth;
  let s = f.base;
  for (let t = 0; t < f.nTrees; t++) {
    const nb = t * internal;
    let node = 0;
    for (let d = 0; d < f.depth; d++) {
      const feat = f.feature[nb + node]!;
      node = feat < 0 || x[feat]! <= f.threshold[nb + node]! ? 2 * node + 1 : 2 * node + 2;
    }
    s += f.leaf[t * leaves + node - internal]!;
  }
  return s;
}

export interface GBDTOptions {
  trees: number;
  depth: number;
  learningRate: number;
  /** L2 regularisation of leaf values. */
  lambda: number;
  /** Minimum hessian (≈ weighted rows) in each child of a split. */
  minChildWeight: number;
  /** Candidate thresholds per feature (quantiles of the training values). */
  bins: number;
}

/** Trains on rows x (row-major, nFeatures each) with labels y and sample weights w. Deterministic. */
export function trainForest(x: Float64Array[], y: number[], w: number[], o: GBDTOptions): Forest {
  const n = x.length;
  const nf = x[0]?.length ?? 0;
  // Quantile bin edges per feature; rows are pre-binned so split search is histogram-based.
  const edges: Float64Array[] = [];
  const binned: Uint8Array[] = [];
  for (let f = 0; f < nf; f++) {
    const vals = Float64Array.from(x, (r) => r[f]!).sort();
    const e: number[] = [];
    for (let b = 1; b < o.bins; b++) {
      // Rounded to float32 here, since that is how thresholds are stored and compared at run time.
      const v = Math.fround(vals[Math.floor((b * n) / o.bins)]!);
      if (e.length === 0 || v > e[e.length - 1]!) e.push(v);
    }
    edges.push(Float64Array.from(e));
    const col = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const v = x[i]![f]!;
      let lo = 0,
        hi = e.length; // first edge ≥ v → bin index
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (e[mid]! < v) lo = mid + 1;
        else hi = mid;
      }
      col[i] = lo;
    }
    binned.push(col);
  }
  let sw = 0,
    sy = 0;
  for (let i = 0; i < n; i++) {
    sw += w[i]!;
    sy += w[i]! * y[i]!;
  }
  const prior = Math.min(1 - 1e-6, Math.max(1e-6, sy / sw));
  const base = Math.log(prior / (1 - prior));
  const margin = new Float64Array(n).fill(base);
  const internal = (1 << o.depth) - 1;
  const leaves = 1 << o.depth;
  const feature = new Int32Array(o.trees * internal).fill(-1);
  const threshold = new Float32Array(o.trees * internal);
  const leaf = new Float32Array(o.trees * leaves);
  const g = new Float64Array(n);
  const h = new Float64Array(n);
  const nodeOf = new Int32Array(n);
  const nBins = o.bins + 1;
  const histG = new Float64Array(nBins);
  const histH = new Float64Array(nBins);

  for (let t = 0; t < o.trees; t++) {
    for (let i = 0; i < n; i++) {
      const p = 1 / (1 + Math.exp(-margin[i]!));
      g[i] = (p - y[i]!) * w[i]!;
      h[i] = Math.max(p * (1 - p), 1e-6) * w[i]!;
    }
    nodeOf.fill(0);
    for (let d = 0; d < o.depth; d++) {
      const first = (1 << d) - 1;
      const count = 1 << d;
      for (let node = first; node < first + count; node++) {
        let G = 0,
          H = 0;
        const rows: number[] = [];
        for (let i = 0; i < n; i++)
          if (nodeOf[i] === node) {
            rows.push(i);
            G += g[i]!;
            H += h[i]!;
          }
        let bestGain = 0,
          bestF = -1,
          bestBin = 0;
        const parentScore = (G * G) / (H + o.lambda);
        for (let f = 0; f < nf; f++) {
          histG.fill(0);
          histH.fill(0);
          const col = binned[f]!;
          for (const i of rows) {
            histG[col[i]!]! += g[i]!;
            histH[col[i]!]! += h[i]!;
          }
          let GL = 0,
            HL = 0;
          const nEdges = edges[f]!.length;
          for (let b = 0; b < nEdges; b++) {
            GL += histG[b]!;
            HL += histH[b]!;
            const GR = G - GL,
              HR = H - HL;
            if (HL < o.minChildWeight || HR < o.minChildWeight) continue;
            const gain = (GL * GL) / (HL + o.lambda) + (GR * GR) / (HR + o.lambda) - parentScore;
            if (gain > bestGain + 1e-12) {
              bestGain = gain;
              bestF = f;
              bestBin = b;
            }
          }
        }
        const ti = t * internal + node;
        if (bestF >= 0) {
          feature[ti] = bestF;
          // Rows in bins ≤ bestBin have values ≤ edges[bestBin].
          threshold[ti] = edges[bestF]![bestBin]!;
          const col = binned[bestF]!;
          for (const i of rows) nodeOf[i] = col[i]! <= bestBin ? 2 * node + 1 : 2 * node + 2;
        } else {
          for (const i of rows) nodeOf[i] = 2 * node + 1;
        }
      }
    }
    const LG = new Float64Array(leaves);
    const LH = new Float64Array(leaves);
    for (let i = 0; i < n; i++) {
      const l = nodeOf[i]! - internal;
      LG[l]! += g[i]!;
      LH[l]! += h[i]!;
    }
    for (let l = 0; l < leaves; l++) leaf[t * leaves + l] = LH[l]! > 0 ? (-LG[l]! / (LH[l]! + o.lambda)) * o.learningRate : 0;
    for (let i = 0; i < n; i++) margin[i]! += leaf[t * leaves + nodeOf[i]! - internal]!;
  }
  return { depth: o.depth, nFeatures: nf, feature, threshold, leaf, nTrees: o.trees, base };
}
