import concurrent.futures
import ctypes
import functools
import os
import threading
import time

import torch
import torch.nn.functional as F
# <check-only> The rest of model.py uses every module.
(concurrent.futures, ctypes, functools, os, threading, time, torch, F)
# </check-only>
