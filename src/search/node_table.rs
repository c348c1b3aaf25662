//! Stores each state once, with its parent link, for the graph searches.

use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

use super::chunked::Chunked;
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
    nodes: Chunked<Node<D>>,
    /// Node ids, hashed and compared through their states' keys: each key lives once,
    /// in its node, and a bucket is an id.
    index: HashTable<NodeId>,
    /// How long the last growth of the index (a rehash, which nothing interrupts) took.
    last_growth: Duration,
    /// Bytes the search's open list and records take per stored state.
    open_bytes: usize,
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
    /// Bytes the search holds once one more state is stored. Capacities, not lengths,
    /// are counted, and when the node store or the index is full the old and the new
    /// allocation are both counted, since both are live while it grows: so a cap is
    /// never passed on the way, even for a moment.
    fn bytes_with_one_more(&self, heap_per_state: usize) -> u64 {
        let len = self.nodes.len() + 1;
        let index_cap = self.index.capacity();
        // The index's table holds 7/8 of its buckets, a control byte each.
        let buckets = |items: usize| (items * 8 / 7).next_power_of_two();
        let index_buckets = if len > index_cap {
            buckets(index_cap) + buckets(len)
        } else {
            buckets(index_cap)
        };
        let bucket_bytes = std::mem::size_of::<NodeId>() + 1;
        (self.nodes.slots_with_one_more() * std::mem::size_of::<Node<D>>()
            + index_buckets * bucket_bytes
            + len * (self.open_bytes + heap_per_state)) as u64
    }

    /// Bytes the search holds for its stored states now (see `bytes_with_one_more`).
    pub fn bytes(&self, domain: &D) -> u64 {
        let buckets = (self.index.capacity() * 8 / 7).next_power_of_two();
        let bucket_bytes = std::mem::size_of::<NodeId>() + 1;
        (self.nodes.capacity() * std::mem::size_of::<Node<D>>()
            + buckets * bucket_bytes
            + self.nodes.len() * (self.open_bytes + domain.state_heap_bytes())) as u64
    }

    /// Open-list bytes allowed per stored state by default: one entry of a few words,
    /// and room for the heap's vector to double.
    const OPEN_BYTES: usize = 64;

    pub fn new() -> NodeTable<D> {
        NodeTable::with_open_bytes(Self::OPEN_BYTES)
    }

    /// A table for a search whose open list and records take `open_bytes` per state.
    pub fn with_open_bytes(open_bytes: usize) -> NodeTable<D> {
        NodeTable {
            open_bytes,
            nodes: Chunked::new(),
            index: HashTable::new(),
            last_growth: Duration::ZERO,
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn node(&self, id: NodeId) -> &Node<D> {
        &self.nodes[id as usize]
    }

    fn hash(key: &D::Key) -> u64 {
        FxBuildHasher.hash_one(key)
    }

    /// The id of the stored state whose key is `key`.
    fn find(&self, domain: &D, key: &D::Key) -> Option<NodeId> {
        let nodes = &self.nodes;
        self.index
            .find(Self::hash(key), |&id| {
                domain.key(&nodes[id as usize].state) == key
            })
            .copied()
    }

    /// The id of the stored state key-equal to `state`.
    pub fn find_state(&self, domain: &D, state: &D::State) -> Option<NodeId> {
        self.find(domain, domain.key(state))
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
                .find(domain, domain.key(state))
                .is_some_and(|known| self.nodes[known as usize].g <= node.g + cost);
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
        let key = domain.key(&state);
        if let Some(id) = self.find(domain, key) {
            let node = &mut self.nodes[id as usize];
            return Ok(if g < node.g {
                node.g = g;
                node.parent = parent;
                node.step = step;
                Inserted::Improved(id)
            } else {
                Inserted::Known
            });
        }
        let index_cap = self.index.capacity();
        // The state may own heap memory (a Sokoban box set).
        budget.check_memory(self.bytes_with_one_more(domain.state_heap_bytes()))?;
        let id = NodeId::try_from(self.nodes.len()).map_err(|_| Stop::MemoryLimit)?;
        let hash = Self::hash(key);
        let nodes = &self.nodes;
        let rehash = |&id: &NodeId| Self::hash(domain.key(&nodes[id as usize].state));
        if self.nodes.len() < index_cap {
            self.index.insert_unique(hash, id, rehash);
        } else {
            // The index doubles now: rehashing twice the entries takes about twice as
            // long as the last time, and must not run past the deadline.
            budget.check_time_for(2 * self.last_growth)?;
            let started = Instant::now();
            self.index.insert_unique(hash, id, rehash);
            self.last_growth = started.elapsed();
        }
        self.nodes.push(Node {
            state,
            parent,
            g,
            step,
        });
        Ok(Inserted::New(id))
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
