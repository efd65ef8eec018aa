//! The boolean circuit IR of paper 003 (section 6.2): XOR, INV, AND, VS (vector-scalar AND),
//! INPUT and OUTPUT gates over numbered wires, in topological order, with the plaintext
//! semantics of Fig. 2 (the twin every protocol run is checked against) and the layering the
//! protocol evaluates by: one round per AND depth.

use std::fmt;

/// A wire's index.
pub type Wire = u32;

/// The most parties a circuit may have.
pub const MAX_PARTIES: usize = 16;

/// One gate. AND is the one-element case of VS, kept apart because most circuits (Bristol
/// files, standard GMW) are made of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Gate {
    /// `INPUT(P, w)`: the next bit of party `party`'s input.
    Input {
        /// The party that gives the bit.
        party: usize,
        /// The wire it sets.
        wire: Wire,
    },
    /// `out = a ⊕ b` (local).
    Xor {
        /// First input.
        a: Wire,
        /// Second input.
        b: Wire,
        /// Output.
        out: Wire,
    },
    /// `out = ¬a` (local: one party flips its share). Not inside branches (see the builder).
    Inv {
        /// Input.
        a: Wire,
        /// Output.
        out: Wire,
    },
    /// `out = a ∧ b`.
    And {
        /// First input.
        a: Wire,
        /// Second input.
        b: Wire,
        /// Output.
        out: Wire,
    },
    /// `VS(out, a, vector)`: `out_k = a ∧ vector_k` for every k.
    Vs {
        /// The scalar.
        scalar: Wire,
        /// The vector.
        vector: Vec<Wire>,
        /// One output per vector element.
        out: Vec<Wire>,
    },
    /// `OUTPUT(w)`: `w` is revealed to every party.
    Output {
        /// The revealed wire.
        wire: Wire,
    },
}

/// Why a gate list is not a valid circuit: the gate's index and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CircuitError {
    /// Index of the offending gate in the list.
    pub gate: usize,
    /// What is wrong, naming wires by index.
    pub reason: String,
}

impl fmt::Display for CircuitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gate {}: {}", self.gate, self.reason)
    }
}

impl std::error::Error for CircuitError {}

/// Gate counts of a circuit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// XOR gates.
    pub xor: usize,
    /// INV gates.
    pub inv: usize,
    /// AND gates.
    pub and: usize,
    /// VS gates.
    pub vs: usize,
    /// Vector elements over all VS gates (the ANDs they stand for).
    pub vs_elements: usize,
    /// AND depth: the rounds of the evaluation before the outputs.
    pub depth: usize,
}

impl Counts {
    /// The OTs one evaluation by `p` parties uses: `p(p − 1)` per AND gate and per VS gate.
    pub fn ots(&self, p: usize) -> usize {
        (self.and + self.vs) * p * (p - 1)
    }
}

/// One round of the evaluation: the local gates whose inputs are ready, then the AND and VS
/// gates that become ready after them (indices into the gate list, in its order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layer {
    /// INPUT, XOR, INV and OUTPUT gates.
    pub local: Vec<usize>,
    /// AND and VS gates: one round of messages for all of them.
    pub nonlinear: Vec<usize>,
}

/// A valid circuit: every wire set exactly once, by a gate before any gate that reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    parties: usize,
    wires: usize,
    gates: Vec<Gate>,
    inputs: Vec<usize>,
    outputs: usize,
    layers: Vec<Layer>,
    /// Who may hold non-zero shares of each wire, and what an evaluation costs: worked out once.
    pub(crate) plan: std::sync::OnceLock<crate::gmw::protocol::Plan>,
}

impl Circuit {
    /// Checks the gate list (1 to [`MAX_PARTIES`] parties, wire indices below `wires`, each set once and before it is read,
    /// parties below `parties`, VS vectors as long as their outputs).
    pub fn new(parties: usize, wires: usize, gates: Vec<Gate>) -> Result<Circuit, CircuitError> {
        if !(1..=MAX_PARTIES).contains(&parties) {
            return Err(CircuitError {
                gate: 0,
                reason: format!("{parties} parties: a circuit has 1 to {MAX_PARTIES}"),
            });
        }
        let mut set = vec![false; wires];
        let mut inputs = vec![0; parties];
        let mut outputs = 0;
        for (i, g) in gates.iter().enumerate() {
            let err = |reason: String| CircuitError { gate: i, reason };
            let read = |w: Wire, set: &[bool]| -> Result<(), CircuitError> {
                match set.get(w as usize) {
                    None => Err(err(format!("wire {w} is beyond the circuit's {wires} wires"))),
                    Some(false) => Err(err(format!("wire {w} is read before any gate sets it"))),
                    Some(true) => Ok(()),
                }
            };
            let write = |w: Wire, set: &mut [bool]| -> Result<(), CircuitError> {
                match set.get_mut(w as usize) {
                    None => Err(err(format!("wire {w} is beyond the circuit's {wires} wires"))),
                    Some(true) => Err(err(format!("wire {w} is set a second time"))),
                    Some(s) => {
                        *s = true;
                        Ok(())
                    }
                }
            };
            match g {
                Gate::Input { party, wire } => {
                    if *party >= parties {
                        return Err(err(format!("input of party {party}, the circuit has {parties} parties")));
                    }
                    inputs[*party] += 1;
                    write(*wire, &mut set)?;
                }
                Gate::Xor { a, b, out } | Gate::And { a, b, out } => {
                    read(*a, &set)?;
                    read(*b, &set)?;
                    write(*out, &mut set)?;
                }
                Gate::Inv { a, out } => {
                    read(*a, &set)?;
                    write(*out, &mut set)?;
                }
                Gate::Vs { scalar, vector, out } => {
                    if vector.len() != out.len() || vector.is_empty() {
                        return Err(err(format!("a VS gate of {} inputs and {} outputs", vector.len(), out.len())));
                    }
                    read(*scalar, &set)?;
                    for &w in vector {
                        read(w, &set)?;
                    }
                    for &w in out {
                        write(w, &mut set)?;
                    }
                }
                Gate::Output { wire } => {
                    read(*wire, &set)?;
                    outputs += 1;
                }
            }
        }
        let layers = layers_of(wires, &gates);
        Ok(Circuit { parties, wires, gates, inputs, outputs, layers, plan: std::sync::OnceLock::new() })
    }

    /// Number of parties.
    pub fn parties(&self) -> usize {
        self.parties
    }
    /// Number of wires.
    pub fn wires(&self) -> usize {
        self.wires
    }
    /// The gates, in topological order.
    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }
    /// Input bits of each party.
    pub fn inputs(&self) -> &[usize] {
        &self.inputs
    }
    /// Output bits.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Gate counts and AND depth.
    pub fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for g in &self.gates {
            match g {
                Gate::Xor { .. } => c.xor += 1,
                Gate::Inv { .. } => c.inv += 1,
                Gate::And { .. } => c.and += 1,
                Gate::Vs { vector, .. } => {
                    c.vs += 1;
                    c.vs_elements += vector.len();
                }
                Gate::Input { .. } | Gate::Output { .. } => {}
            }
        }
        c.depth = self.layers().iter().filter(|l| !l.nonlinear.is_empty()).count();
        c
    }

    /// The rounds of an evaluation: layer `k` holds the local gates at AND depth `k` and then the
    /// AND and VS gates at depth `k + 1`, so every gate's inputs are ready when its layer runs.
    /// The last layer has no nonlinear gates.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Fig. 2's `eval`: the outputs in the order of the OUTPUT gates, for each party's input bits
    /// (`inputs[p]` holds exactly [`inputs`](Self::inputs)`()[p]` bits, used in gate order).
    pub fn eval(&self, inputs: &[Vec<bool>]) -> Result<Vec<bool>, CircuitError> {
        self.check_inputs(inputs.iter().map(Vec::len))?;
        let mut next = vec![0usize; self.parties];
        let mut w = vec![false; self.wires];
        let mut out = Vec::with_capacity(self.outputs);
        for g in &self.gates {
            match g {
                Gate::Input { party, wire } => {
                    w[*wire as usize] = inputs[*party][next[*party]];
                    next[*party] += 1;
                }
                Gate::Xor { a, b, out } => w[*out as usize] = w[*a as usize] ^ w[*b as usize],
                Gate::Inv { a, out } => w[*out as usize] = !w[*a as usize],
                Gate::And { a, b, out } => w[*out as usize] = w[*a as usize] & w[*b as usize],
                Gate::Vs { scalar, vector, out } => {
                    let s = w[*scalar as usize];
                    for (&v, &o) in vector.iter().zip(out) {
                        w[o as usize] = s & w[v as usize];
                    }
                }
                Gate::Output { wire } => out.push(w[*wire as usize]),
            }
        }
        Ok(out)
    }

    /// Errors unless the input lengths are the circuit's.
    pub(crate) fn check_inputs(&self, lens: impl ExactSizeIterator<Item = usize>) -> Result<(), CircuitError> {
        if lens.len() != self.parties {
            return Err(CircuitError {
                gate: 0,
                reason: format!("inputs for {} parties, the circuit has {}", lens.len(), self.parties),
            });
        }
        for (p, (got, &want)) in lens.zip(&self.inputs).enumerate() {
            if got != want {
                return Err(CircuitError {
                    gate: 0,
                    reason: format!("party {p} gave {got} input bits, the circuit takes {want}"),
                });
            }
        }
        Ok(())
    }
}

/// The layers of a valid gate list (see [`Circuit::layers`]).
fn layers_of(wires: usize, gates: &[Gate]) -> Vec<Layer> {
    let mut depth = vec![0u32; wires];
    let mut gate_depth = Vec::with_capacity(gates.len());
    for g in gates {
        let d = match g {
            Gate::Input { wire, .. } => {
                depth[*wire as usize] = 0;
                0
            }
            Gate::Xor { a, b, out } => {
                let d = depth[*a as usize].max(depth[*b as usize]);
                depth[*out as usize] = d;
                d
            }
            Gate::Inv { a, out } => {
                let d = depth[*a as usize];
                depth[*out as usize] = d;
                d
            }
            Gate::And { a, b, out } => {
                let d = depth[*a as usize].max(depth[*b as usize]) + 1;
                depth[*out as usize] = d;
                d
            }
            Gate::Vs { scalar, vector, out } => {
                let d = vector.iter().fold(depth[*scalar as usize], |m, &w| m.max(depth[w as usize])) + 1;
                for &w in out {
                    depth[w as usize] = d;
                }
                d
            }
            Gate::Output { wire } => depth[*wire as usize],
        };
        gate_depth.push(d as usize);
    }
    let top = gate_depth.iter().copied().max().unwrap_or(0);
    let mut layers = vec![Layer::default(); top + 1];
    for (i, (g, &d)) in gates.iter().zip(&gate_depth).enumerate() {
        match g {
            Gate::And { .. } | Gate::Vs { .. } => layers[d - 1].nonlinear.push(i),
            _ => layers[d].local.push(i),
        }
    }
    layers
}
