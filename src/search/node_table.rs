//! Stores each state once, with its parent link, for the graph searches.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use rustc_hash::FxBuildHasher;

use super::{Budget, Cost, Domain, Solution, Stop, Successor};

pub type NodeId = u32;

pub struct Node<D: Domain> {
    pub state: D::State,
    pub parent: Option<(NodeId, D::Action)>,
    pub g: Cost,
    /// The cost of the action from the parent. A solution's cost is the sum of these:
    /// a node's `g` goes stale when a search that does not reopen nodes (greedy, FESS)
    /// finds a cheaper way to one of its ancestors.
    step: Cost,
}

pub struct NodeTable<D: Domain> {
    nodes: Vec<Node<D>>,
    index: HashMap<D::Key, NodeId, FxBuildHasher>,
}

/// What [`NodeTable::insert`] did with a state.
pub enum Inserted {
    New(NodeId),
    /// Already stored with a cost no better than the new one.
    Known,
    /// Already stored; the new path was cheaper and replaced the old link.
    Improved(NodeId),
}

impl<D: Domain> NodeTable<D> {
    /// Approximate bytes one stored state costs, for the memory cap.
    pub const BYTES_PER_STATE: usize = std::mem::size_of::<Node<D>>()
        + std::mem::size_of::<D::Key>()
        + std::mem::size_of::<NodeId>()
        + 8;

    pub fn new() -> NodeTable<D> {
        NodeTable {
            nodes: Vec::new(),
            index: HashMap::default(),
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn node(&self, id: NodeId) -> &Node<D> {
        &self.nodes[id as usize]
    }

    pub fn clear(&mut self) {
        self.nodes.clear();
        self.index.clear();
    }

    /// Appends the successors of node `id` that [`NodeTable::insert`] would not leave
    /// alone (unknown, or reached more cheaply now); returns how many the domain
    /// generated, those left out included.
    pub fn expand(
        &self,
        domain: &D,
        id: NodeId,
        out: &mut Vec<Successor<D::State, D::Action>>,
    ) -> usize {
        let node = self.node(id);
        let mut stored = 0;
        domain.expand_unknown(&node.state, out, &mut |state, cost| {
            let held = self
                .index
                .get(&domain.key(state))
                .is_some_and(|&known| self.nodes[known as usize].g <= node.g + cost);
            stored += usize::from(held);
            held
        });
        out.len() + stored
    }

    /// Stores `state` unless its key is known with a cost ≤ `g`.
    pub fn insert(
        &mut self,
        domain: &D,
        state: D::State,
        parent: Option<(NodeId, D::Action)>,
        g: Cost,
        budget: &Budget,
    ) -> Result<Inserted, Stop> {
        let step = parent
            .as_ref()
            .map_or(0, |(p, _)| g - self.nodes[*p as usize].g);
        match self.index.entry(domain.key(&state)) {
            Entry::Occupied(entry) => {
                let id = *entry.get();
                let node = &mut self.nodes[id as usize];
                if g < node.g {
                    node.g = g;
                    node.parent = parent;
                    node.step = step;
                    Ok(Inserted::Improved(id))
                } else {
                    Ok(Inserted::Known)
                }
            }
            Entry::Vacant(entry) => {
                // The state and its key may each own heap memory (a Sokoban box set).
                let bytes = Self::BYTES_PER_STATE + 2 * domain.state_heap_bytes();
                budget.check_memory(self.nodes.len() + 1, bytes)?;
                let id = NodeId::try_from(self.nodes.len()).map_err(|_| Stop::MemoryLimit)?;
                entry.insert(id);
                self.nodes.push(Node {
                    state,
                    parent,
                    g,
                    step,
                });
                Ok(Inserted::New(id))
            }
        }
    }

    /// The actions from the root to `id`, following parent links.
    pub fn solution(&self, id: NodeId) -> Solution<D::Action> {
        let mut actions = Vec::new();
        let mut cost = 0;
        let mut current = id;
        while let Some((parent, action)) = self.node(current).parent {
            actions.push(action);
            cost += self.node(current).step;
            current = parent;
        }
        actions.reverse();
        Solution { actions, cost }
    }
}
