import concurrent.futures
import ctypes
import os
import threading
import time

import torch
import torch.nn.functional as F
# <check-only> The rest of model.py uses every module.
(concurrent.futures, ctypes, os, threading, time, torch, F)
# </check-only>
