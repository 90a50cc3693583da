//! Payload pools: the line buffers and atomic batches that messages carry by handle, so that events
//! stay small (`msg.rs`). A payload is owned by whichever message carries its handle; the receiver
//! frees it or passes it on. Each simulation domain has its own pools (`domain.rs`).

pub const MAX_LINE: usize = 128;
pub type LineBuf = [u8; MAX_LINE];

/// A free-list arena.
pub struct Pool<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Pool {
            items: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T> Pool<T> {
    pub fn alloc(&mut self, v: T) -> u32 {
        if let Some(i) = self.free.pop() {
            self.items[i as usize] = v;
            i
        } else {
            self.items.push(v);
            (self.items.len() - 1) as u32
        }
    }
    /// A slot holding whatever its last user left (or `fresh()` for a new slot): for payloads whose
    /// buffers are reused in place, so that a steady state allocates nothing.
    pub fn alloc_reuse(&mut self, fresh: impl FnOnce() -> T) -> (u32, &mut T) {
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.items.push(fresh());
                (self.items.len() - 1) as u32
            }
        };
        (i, &mut self.items[i as usize])
    }

    /// A hint that slot `i` will be read soon (`engine::prefetch`); nothing if there is no such slot.
    #[inline]
    pub fn prefetch(&self, i: u32) {
        if let Some(x) = self.items.get(i as usize) {
            crate::engine::prefetch(x);
        }
    }

    pub fn get(&self, i: u32) -> &T {
        &self.items[i as usize]
    }
    pub fn get_mut(&mut self, i: u32) -> &mut T {
        &mut self.items[i as usize]
    }
    /// Moves the value out of slot `i` (leaving `filler`) and frees the slot.
    pub fn take(&mut self, i: u32, filler: T) -> T {
        self.free.push(i);
        std::mem::replace(&mut self.items[i as usize], filler)
    }
    pub fn release(&mut self, i: u32) {
        self.free.push(i);
    }
    /// Slots in use.
    #[cfg(test)]
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}
