//! Building circuits with branches (paper 003, sections 5.2 and 6.3).
//!
//! [`Builder::switch`] evaluates one of `b` branches chosen by a secret one-hot selector. With
//! [`Branching::Vs`] (MOTIF) each branch's inputs are demultiplexed by one VS gate with its
//! selector bit, so every wire of an inactive branch carries 0; NOT inside a branch is an XOR
//! with the branch's `aux` wire (its selector bit: 1 when active, else 0); the branches' AND and
//! VS gates of one depth are joined by merging them (Fig. 1's `merge`, by layers); the outputs are
//! multiplexed by XOR. With [`Branching::Plain`] (standard GMW) every branch runs on the raw
//! inputs and the outputs are multiplexed by one AND per output bit and branch.

use super::circuit::{Circuit, CircuitError, Gate, Wire};

/// How [`Builder::switch`] evaluates its branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Branching {
    /// Demultiplexed inputs, merged VS gates, XOR multiplexing (MOTIF).
    Vs,
    /// Every branch on the raw inputs, AND multiplexing (standard GMW, the baseline).
    Plain,
}

/// A branch body: builds the branch on its inputs, returns its outputs.
pub type Branch<'a> = &'a dyn Fn(&mut Builder, &[Wire]) -> Vec<Wire>;

/// Builds a [`Circuit`] gate by gate, keeping each wire's AND depth.
pub struct Builder {
    parties: usize,
    gates: Vec<Gate>,
    depth: Vec<u32>,
    /// Inside a VS branch: the branch's `aux` wire, and the wires the branch may read.
    scope: Option<Scope>,
    error: Option<String>,
}

struct Scope {
    aux: Wire,
}

impl Builder {
    /// An empty circuit of `parties` parties.
    pub fn new(parties: usize) -> Self {
        Builder { parties, gates: Vec::new(), depth: Vec::new(), scope: None, error: None }
    }

    fn fresh(&mut self, depth: u32) -> Wire {
        self.depth.push(depth);
        (self.depth.len() - 1) as Wire
    }

    fn d(&self, w: Wire) -> u32 {
        self.depth[w as usize]
    }

    /// `n` input bits of `party`.
    pub fn input(&mut self, party: usize, n: usize) -> Vec<Wire> {
        if self.scope.is_some() {
            self.fail("an INPUT inside a branch");
        }
        (0..n)
            .map(|_| {
                let wire = self.fresh(0);
                self.gates.push(Gate::Input { party, wire });
                wire
            })
            .collect()
    }

    /// `a ⊕ b`.
    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        let out = self.fresh(self.d(a).max(self.d(b)));
        self.gates.push(Gate::Xor { a, b, out });
        out
    }

    /// `¬a`: an INV gate, or inside a VS branch `a ⊕ aux`.
    pub fn not(&mut self, a: Wire) -> Wire {
        if let Some(aux) = self.scope.as_ref().map(|s| s.aux) {
            return self.xor(a, aux);
        }
        let out = self.fresh(self.d(a));
        self.gates.push(Gate::Inv { a, out });
        out
    }

    /// `a ∧ b`.
    pub fn and(&mut self, a: Wire, b: Wire) -> Wire {
        let out = self.fresh(self.d(a).max(self.d(b)) + 1);
        self.gates.push(Gate::And { a, b, out });
        out
    }

    /// `a ∧ v_k` for every `k`: one VS gate.
    pub fn vs(&mut self, a: Wire, v: &[Wire]) -> Vec<Wire> {
        if v.is_empty() {
            return Vec::new();
        }
        let d = v.iter().fold(self.d(a), |m, &w| m.max(self.d(w))) + 1;
        let out: Vec<Wire> = v.iter().map(|_| self.fresh(d)).collect();
        self.gates.push(Gate::Vs { scalar: a, vector: v.to_vec(), out: out.clone() });
        out
    }

    /// Reveals `ws` to every party (in this order, after earlier outputs).
    pub fn output(&mut self, ws: &[Wire]) {
        if self.scope.is_some() {
            self.fail("an OUTPUT inside a branch");
        }
        self.gates.extend(ws.iter().map(|&wire| Gate::Output { wire }));
    }

    /// IF `cond` THEN `then` ELSE `otherwise`, both on `inputs`.
    pub fn if_else(
        &mut self,
        cond: Wire,
        inputs: &[Wire],
        then: Branch,
        otherwise: Branch,
        how: Branching,
    ) -> Vec<Wire> {
        let not_cond = self.not(cond);
        self.switch(&[not_cond, cond], inputs, &[otherwise, then], how)
    }

    /// SWITCH: the outputs of branch `i` where `select` (one-hot, one bit per branch) has its
    /// bit `i` set. Every branch returns as many outputs; a branch reads only its inputs and the
    /// wires it makes. All zero if no bit is set; the XOR of the selected ones' outputs if the
    /// selector is not one-hot (VS) — callers pass one-hot selectors.
    pub fn switch(&mut self, select: &[Wire], inputs: &[Wire], branches: &[Branch], how: Branching) -> Vec<Wire> {
        if select.len() != branches.len() || branches.is_empty() {
            self.fail(&format!("{} selector bits for {} branches", select.len(), branches.len()));
            return Vec::new();
        }
        match how {
            Branching::Plain => {
                let outs: Vec<Vec<Wire>> = branches.iter().map(|f| f(self, inputs)).collect();
                let Some(width) = self.same_width(&outs) else { return Vec::new() };
                let mut acc: Option<Vec<Wire>> = None;
                for (s, o) in select.iter().zip(&outs) {
                    let picked: Vec<Wire> = o.iter().map(|&w| self.and(*s, w)).collect();
                    acc = Some(match acc {
                        None => picked,
                        Some(a) => a.iter().zip(&picked).map(|(&x, &y)| self.xor(x, y)).collect(),
                    });
                }
                acc.unwrap_or_else(|| vec![0; width])
            }
            Branching::Vs => {
                let mut bodies = Vec::with_capacity(branches.len());
                let mut outs = Vec::with_capacity(branches.len());
                for (&s, f) in select.iter().zip(branches) {
                    // the demultiplexed inputs are the wires from `first` on
                    let first = self.depth.len() as Wire;
                    let ins = self.vs(s, inputs);
                    let outer = std::mem::take(&mut self.gates);
                    let saved = self.scope.replace(Scope { aux: s });
                    let o = f(self, &ins);
                    self.scope = saved;
                    let body = std::mem::replace(&mut self.gates, outer);
                    self.check_scope(&body, s, first);
                    bodies.push(body);
                    outs.push(o);
                }
                let Some(width) = self.same_width(&outs) else { return Vec::new() };
                let merged = self.merge(bodies);
                self.gates.extend(merged);
                (0..width)
                    .map(|k| {
                        let mut acc = outs[0][k];
                        for o in &outs[1..] {
                            acc = self.xor(acc, o[k]);
                        }
                        acc
                    })
                    .collect()
            }
        }
    }

    fn same_width(&mut self, outs: &[Vec<Wire>]) -> Option<usize> {
        let width = outs.first().map_or(0, Vec::len);
        if let Some(o) = outs.iter().find(|o| o.len() != width) {
            self.fail(&format!("branches return {width} and {} outputs", o.len()));
            return None;
        }
        Some(width)
    }

    /// Errors (at [`build`](Self::build)) if a branch body reads a wire that is neither its
    /// aux nor made inside it or by its demultiplexer (wires from `first` on): such a wire is not
    /// 0 when the branch is inactive.
    fn check_scope(&mut self, body: &[Gate], aux: Wire, first: Wire) {
        let outside = |w: &Wire| *w < first && *w != aux;
        let bad = body.iter().find_map(|g| match g {
            Gate::Xor { a, b, .. } | Gate::And { a, b, .. } => [a, b].into_iter().find(|w| outside(w)),
            Gate::Inv { a, .. } => Some(a).filter(|w| outside(w)),
            Gate::Vs { scalar, vector, .. } => std::iter::once(scalar).chain(vector).find(|w| outside(w)),
            Gate::Input { .. } | Gate::Output { .. } => None,
        });
        if let Some(w) = bad {
            self.fail(&format!("a branch reads wire {w}, which is not one of its inputs"));
        }
    }

    /// Fig. 1's `merge` over `b` branch bodies, by layers (section 6.3): the AND and VS gates of
    /// one depth, one from each branch, become one VS gate whose scalar is the XOR of theirs and
    /// whose vector is the concatenation of theirs; local gates keep their order within each
    /// branch. Sound because at most one branch is active and the others carry 0 everywhere.
    fn merge(&mut self, bodies: Vec<Vec<Gate>>) -> Vec<Gate> {
        let branches = bodies.len();
        let depth_of = |g: &Gate| -> u32 {
            match g {
                Gate::Xor { out, .. } | Gate::Inv { out, .. } | Gate::And { out, .. } => self.d(*out),
                Gate::Vs { out, .. } => self.d(out[0]),
                Gate::Input { wire, .. } | Gate::Output { wire } => self.d(*wire),
            }
        };
        // an AND/VS gate at depth d runs after the local gates at depth d − 1
        let is_local = |g: &Gate| !matches!(g, Gate::And { .. } | Gate::Vs { .. });
        let all = || bodies.iter().flatten();
        let lo = all().map(|g| depth_of(g) - u32::from(!is_local(g))).min().unwrap_or(0);
        let top = all().map(depth_of).max().unwrap_or(0);
        let levels = (top - lo + 1) as usize;
        // local[d][branch]: local gates at depth lo + d; nonlinear[d][branch]: AND/VS gates there
        let mut local = vec![vec![Vec::new(); bodies.len()]; levels];
        let mut nonlinear = vec![vec![Vec::new(); bodies.len()]; levels];
        let total: usize = bodies.iter().map(Vec::len).sum();
        for (i, body) in bodies.into_iter().enumerate() {
            for g in body {
                let d = (depth_of(&g) - lo) as usize;
                match g {
                    Gate::And { a, b, out } => nonlinear[d][i].push((a, vec![b], vec![out])),
                    Gate::Vs { scalar, vector, out } => nonlinear[d][i].push((scalar, vector, out)),
                    g => local[d][i].push(g),
                }
            }
        }
        let mut out = Vec::with_capacity(total);
        for d in 0..levels {
            // the local gates at this depth, branch by branch, in each branch's order
            out.extend(local[d].iter_mut().flat_map(std::mem::take));
            if d + 1 == levels {
                break;
            }
            // then the AND/VS gates one deeper, slot t of every branch into one gate
            let per = std::mem::take(&mut nonlinear[d + 1]);
            let slots = per.iter().map(Vec::len).max().unwrap_or(0);
            let mut iters: Vec<_> = per.into_iter().map(Vec::into_iter).collect();
            let slot_parts: Vec<Vec<_>> =
                (0..slots).map(|_| iters.iter_mut().filter_map(Iterator::next).collect()).collect();
            // each slot's scalar: the XOR of its branches' scalars, branch by branch across all
            // slots (runs of gates over consecutive wires)
            let mut scalars: Vec<Wire> = slot_parts.iter().map(|p| p[0].0).collect();
            for i in 1..branches {
                for (scalar, parts) in scalars.iter_mut().zip(&slot_parts) {
                    if let Some(p) = parts.get(i) {
                        let s = self.fresh(self.d(*scalar).max(self.d(p.0)));
                        out.push(Gate::Xor { a: *scalar, b: p.0, out: s });
                        *scalar = s;
                    }
                }
            }
            let mut gates = Vec::with_capacity(slots);
            for (parts, scalar) in slot_parts.into_iter().zip(scalars) {
                let (vector, outs): (Vec<Wire>, Vec<Wire>) =
                    parts.into_iter().flat_map(|(_, v, o)| v.into_iter().zip(o)).unzip();
                gates.push(if vector.len() == 1 {
                    Gate::And { a: scalar, b: vector[0], out: outs[0] }
                } else {
                    Gate::Vs { scalar, vector, out: outs }
                });
            }
            out.extend(gates);
        }
        out
    }

    fn fail(&mut self, what: &str) {
        self.error.get_or_insert_with(|| what.to_string());
    }

    /// The circuit, or the first misuse (a branch reading outside wires, branches of different
    /// widths, INPUT or OUTPUT inside a branch, a gate list that is not valid).
    pub fn build(self) -> Result<Circuit, CircuitError> {
        if let Some(reason) = self.error {
            return Err(CircuitError { gate: self.gates.len(), reason });
        }
        Circuit::new(self.parties, self.depth.len(), self.gates)
    }
}
